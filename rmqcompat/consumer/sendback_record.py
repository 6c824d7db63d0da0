"""The record that sends a failed message back to a delay level (SEMANTICS section 4):
:func:`~rmqcompat.parking.park` of :func:`~rmqcompat.retry.sendback_properties`.

Every send-back of the concurrent consumer builds one, so where the compiled core is
built its headers come from one core call over the message's properties instead of two
dict copies and their encoding: 2.1-3.5 against 7.1-8.8 us a record (timeit, a message
of six properties, three rounds on a busy machine; the core call itself 1.0-1.5 us).
"""

from __future__ import annotations

from rmqcompat.core import CORE
from rmqcompat.message import MessageExt
from rmqcompat.parking import ParkedAt, park, parking_target
from rmqcompat.retry import sendback_properties
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.naming import to_kafka_topic, validate_topic
from rmqcompat.wire import OutgoingRecord


def send_back_record(
    msg: MessageExt,
    reconsume_times: int,
    real_topic: str,
    level: int,
    levels: DelayLevels,
    namespace: str,
    now_ms: int,
) -> tuple[OutgoingRecord, ParkedAt]:
    """The record that sends ``msg`` (whose delivery with the stored count
    ``reconsume_times`` failed; its topic already reset to the original one) back to
    ``level`` of ``levels``, bound for ``real_topic``, parked at ``now_ms``; and where it
    parks, as written (a send-back carries no timer: its ``DUE_TIME`` is the level's).

    Without the core, for a level of delay 0 (no parking) and for properties that are
    not a plain dict it is the pure composition, the reference; otherwise the core's
    ``send_back_headers`` writes the same headers (``tests/unit/test_core_parity.py``
    runs both)."""
    parked_at = parking_target(real_topic, level, levels, now_ms)
    due, target = parked_at
    if CORE is None or due is None or type(msg.properties) is not dict:
        properties = sendback_properties(msg, msg.topic, reconsume_times)
        record = park(
            msg.body,
            msg.key,
            properties,
            real_topic=real_topic,
            level=level,
            levels=levels,
            namespace=namespace,
            now_ms=now_ms,
        )
        return record, parked_at
    topic = validate_topic(real_topic)
    headers = CORE.send_back_headers(msg, reconsume_times, topic, level, due)
    record = OutgoingRecord(to_kafka_topic(target, namespace), msg.body, msg.key, headers)
    return record, parked_at
