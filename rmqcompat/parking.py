"""Parking a message on a delay-level topic and releasing it when due (pure functions).

A parked record keeps the message's body, key and properties and adds ``REAL_TOPIC``
(the logical topic it is bound for), ``DELAY`` (the level) and ``DUE_TIME`` (epoch ms),
so the forwarder never infers the due time from a record timestamp. Level topics are
shared by every group of a namespace, like RocketMQ's ``SCHEDULE_TOPIC_XXXX`` queues.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rmqcompat import properties as props
from rmqcompat.errors import MalformedHeaderError
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.naming import to_kafka_topic, validate_topic
from rmqcompat.wire import OutgoingRecord

_PARKING_PROPERTIES = (props.REAL_TOPIC, props.DELAY, props.DUE_TIME, props.REAL_QID)


def park(
    value: bytes,
    key: bytes | None,
    properties: Mapping[str, str],
    *,
    real_topic: str,
    level: int,
    levels: DelayLevels,
    namespace: str,
    now_ms: int,
) -> OutgoingRecord:
    """The record that parks a message on ``level`` until ``now_ms`` + that level's delay.

    For a timer message (``TIMER_DELIVER_MS``) due before the level's delay ends, the due
    time is the delivery time itself.
    """
    due = now_ms + levels.delay_ms(level)
    if props.TIMER_DELIVER_MS in properties:
        due = min(due, max(now_ms, props.decode_int(properties, props.TIMER_DELIVER_MS)))
    out = {k: v for k, v in properties.items() if k not in _PARKING_PROPERTIES}
    out[props.REAL_TOPIC] = validate_topic(real_topic)
    out[props.DELAY] = props.encode_int(level)
    out[props.DUE_TIME] = props.encode_int(due)
    return OutgoingRecord(
        topic=to_kafka_topic(levels.topic(level), namespace),
        value=value,
        key=key,
        headers=props.to_headers(out),
    )


def first_level(properties: Mapping[str, str], levels: DelayLevels, now_ms: int) -> int | None:
    """The level a producer parks a scheduled or timer message on; None to send it now.

    Raises:
        MalformedHeaderError: ``TIMER_DELIVER_MS`` is not an integer.
        ConfigError: ``DELAY`` names a level outside the table.
    """
    if props.TIMER_DELIVER_MS in properties:
        remaining = props.decode_int(properties, props.TIMER_DELIVER_MS) - now_ms
        if remaining <= 0:
            return None
        return levels.hop_level(remaining) or 1
    level = props.decode_int(properties, props.DELAY, 0)
    return levels.check(min(level, levels.max_level)) if level > 0 else None


@dataclass(frozen=True)
class Release:
    """What the forwarder does with a parked record whose due time has come."""

    real_topic: str
    properties: dict[str, str]
    next_level: int | None


def release(properties: Mapping[str, str], levels: DelayLevels, now_ms: int) -> Release:
    """Strip the parking properties; a timer message not yet due hops on to another level.

    Raises:
        MalformedHeaderError: ``REAL_TOPIC`` is missing or a number is malformed.
        InvalidNameError: ``REAL_TOPIC`` is not a legal topic name.
    """
    real_topic = properties.get(props.REAL_TOPIC)
    if not real_topic:
        raise MalformedHeaderError(f"header {props.REAL_TOPIC} is missing")
    validate_topic(real_topic)
    cleaned = {k: v for k, v in properties.items() if k not in _PARKING_PROPERTIES}
    next_level = None
    if props.TIMER_DELIVER_MS in cleaned:
        next_level = first_level(cleaned, levels, now_ms)
    if next_level is None:
        cleaned.pop(props.TIMER_DELIVER_MS, None)
    return Release(real_topic, cleaned, next_level)


def due_time(properties: Mapping[str, str]) -> int:
    """The epoch ms at which a parked record is due.

    Raises:
        MalformedHeaderError: ``DUE_TIME`` is missing or not an integer.
    """
    return props.decode_int(properties, props.DUE_TIME)
