"""What the forwarder does with the head record of a level partition (pure, clock passed in).

One of three plans: :class:`Wait` until the (skew-corrected) due time; :class:`Forward`
the released message to its real topic, or hop a timer message on to the next level;
:class:`Quarantine` a record that cannot be parsed. Parsing happens before the due check,
so a poison record is set aside at once instead of blocking its partition until "due".
"""

from __future__ import annotations

from dataclasses import dataclass

from rmqcompat import parking
from rmqcompat import properties as props
from rmqcompat.errors import ConfigError, InvalidNameError, MalformedHeaderError
from rmqcompat.forwarder.schedule import corrected_due, is_due
from rmqcompat.quarantine import quarantine_record
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.naming import to_kafka_topic
from rmqcompat.wire import KafkaRecord, OutgoingRecord


@dataclass(frozen=True)
class Wait:
    due_ms: int


@dataclass(frozen=True)
class Forward:
    """Produce ``record``; ``hop`` means it goes to another level rather than its real topic."""

    record: OutgoingRecord
    due_ms: int
    hop: bool


@dataclass(frozen=True)
class Quarantine:
    record: OutgoingRecord
    reason: str


Plan = Wait | Forward | Quarantine


def plan_head(
    record: KafkaRecord, level_delay_ms: int, levels: DelayLevels, namespace: str, now_ms: int
) -> Plan:
    """Decide what to do with ``record``, the head of a partition of a level topic.

    Never raises for bad record content: such records get a :class:`Quarantine` plan.
    """
    try:
        properties = props.from_headers(record.headers())
        due = corrected_due(parking.due_time(properties), now_ms, level_delay_ms)
        released = parking.release(properties, levels, now_ms)
        real_topic = to_kafka_topic(released.real_topic, namespace)
    except (MalformedHeaderError, InvalidNameError, ConfigError) as exc:
        reason = f"{type(exc).__name__}: {exc}"
        return Quarantine(quarantine_record(record, reason, namespace), reason)
    if not is_due(due, now_ms):
        return Wait(due)
    value = record.value() or b""
    if released.next_level is not None:
        hop = parking.park(
            value,
            record.key(),
            released.properties,
            real_topic=released.real_topic,
            level=released.next_level,
            levels=levels,
            namespace=namespace,
            now_ms=now_ms,
        )
        return Forward(hop, due, hop=True)
    out = OutgoingRecord(real_topic, value, record.key(), props.to_headers(released.properties))
    return Forward(out, due, hop=False)
