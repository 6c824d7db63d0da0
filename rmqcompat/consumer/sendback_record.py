"""The record that sends a failed message back to a delay level (SEMANTICS section 4):
:func:`~rmqcompat.parking.park` of :func:`~rmqcompat.retry.sendback_properties`.

Every send-back of the concurrent consumer builds one, so where the compiled core is
built its headers come from one core call over the message's properties instead of two
dict copies and their encoding: 2.1-3.5 against 7.1-8.8 us a record (timeit, a message
of six properties, three rounds on a busy machine; the core call itself 1.0-1.5 us).
What depends only on the level (its topic, its delay, the topic's Kafka name) is worked
out once per level (:class:`SendBackTarget`): of the 1.7 us a record took, those pieces
took about 1.0 (timeit of each, a quiet machine).
"""

from __future__ import annotations

from dataclasses import dataclass

from rmqcompat.core import CORE
from rmqcompat.message import MessageExt
from rmqcompat.parking import ParkedAt, level_target, park, parked_at
from rmqcompat.retry import sendback_properties
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.naming import to_kafka_topic, validate_topic
from rmqcompat.wire import OutgoingRecord


@dataclass(frozen=True, slots=True)
class SendBackTarget:
    """Where the send-backs to ``level`` of ``levels``, bound for ``real_topic`` (a name
    checked) in ``namespace``, go: the level's delay, the logical topic its records are
    produced to (:func:`~rmqcompat.parking.level_target`) and that topic's Kafka name."""

    real_topic: str
    level: int
    levels: DelayLevels
    namespace: str
    delay_ms: int
    logical: str
    physical: str

    @classmethod
    def of(cls, real_topic: str, level: int, levels: DelayLevels, namespace: str) -> SendBackTarget:
        """Raises:
        InvalidNameError: ``real_topic`` or ``namespace`` is not a legal name.
        ConfigError: ``level`` is not in ``levels``."""
        delay, logical = level_target(real_topic, level, levels)
        physical = to_kafka_topic(logical, namespace)
        return cls(validate_topic(real_topic), level, levels, namespace, delay, logical, physical)


def send_back_record(
    msg: MessageExt, reconsume_times: int, target: SendBackTarget, now_ms: int
) -> tuple[OutgoingRecord, ParkedAt]:
    """The record that sends ``msg`` (whose delivery with the stored count
    ``reconsume_times`` failed; its topic already reset to the original one) back to
    ``target``, parked at ``now_ms``; and where it parks, as written (a send-back carries
    no timer: its ``DUE_TIME`` is the level's).

    Without the core, for a level of delay 0 (no parking) and for properties that are
    not a plain dict it is the pure composition, the reference; otherwise the core's
    ``send_back_headers`` writes the same headers (``tests/unit/test_core_parity.py``
    runs both)."""
    parked = parked_at(target.delay_ms, target.logical, now_ms)
    due = parked[0]
    if CORE is None or due is None or type(msg.properties) is not dict:
        properties = sendback_properties(msg, msg.topic, reconsume_times)
        record = park(
            msg.body,
            msg.key,
            properties,
            real_topic=target.real_topic,
            level=target.level,
            levels=target.levels,
            namespace=target.namespace,
            now_ms=now_ms,
        )
        return record, parked
    headers = CORE.send_back_headers(msg, reconsume_times, target.real_topic, target.level, due)
    return OutgoingRecord(target.physical, msg.body, msg.key, headers), parked
