"""Parking a message on a delay-level topic and releasing it when due (pure functions).

A parked record keeps the message's body, key and properties and adds ``REAL_TOPIC``
(the logical topic it is bound for), ``REAL_QID`` (its partition there, or
:data:`ANY_QUEUE`), ``DELAY`` (the level in the parker's table) and ``DUE_TIME`` (epoch
ms on the parker's clock). Level topics are named by their delay and shared by every
group of a namespace, like RocketMQ's ``SCHEDULE_TOPIC_XXXX`` queues.

When a parked record is due (:func:`due_time`): at its ``DUE_TIME``, the time the parker
(the producer at the user's send call, the consumer at the listener's failure) wrote once,
so the delay a user sees counts from the send call or the failure, and whatever the record
spent before the broker appended it (batching, a busy broker) is part of the delay, not
added to it. Level topics are created with ``message.timestamp.type=LogAppendTime``, and
the broker's append time bounds how far a parker's clock is trusted: the due time is never
later than append time + the level's delay (a parker whose clock is ahead cannot lengthen
a delay), nor earlier than that minus :func:`park_lag_ms` (a parker whose clock is behind
shortens a delay by at most that, never to nothing). Within those bounds the difference
between the parker's clock and the forwarder's moves a forward by as much (NTP keeps it
to milliseconds). On a topic that still stamps CreateTime (created before, or a broker
that ignores LogAppendTime) ``DUE_TIME`` decides alone.

Timer messages (``TIMER_DELIVER_MS``, RocketMQ 5) keep an absolute deadline in the
*sender's* clock, compared with the forwarder's: they are delivered early by however
much the sender's clock is behind the forwarder's, late by however much it is ahead.
The hops that carry them count from append time like any level.

Released messages keep ``REAL_TOPIC``, ``REAL_QID`` and ``DELAY`` (the level waited on)
as Apache RocketMQ 5.5.0 delivers them; ``DUE_TIME`` is removed. A delivered timer message
has no ``DELAY`` (its levels were hops of ours) but RocketMQ's timer properties:
``TIMER_DELIVER_MS`` kept, ``TIMER_OUT_MS`` (the delivery time), ``TIMER_ENQUEUE_MS``
(first parked) and ``TIMER_DEQUEUE_MS`` (released).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rmqcompat import properties as props
from rmqcompat.errors import MalformedHeaderError
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.naming import to_kafka_topic, validate_topic
from rmqcompat.wire import OutgoingRecord

#: ``REAL_QID`` of a message whose partition the real topic's partitioner picks (by key),
#: as Kafka's "unassigned partition" -1.
ANY_QUEUE = -1
#: What releasing a parked record removes (``REAL_TOPIC``, ``REAL_QID``, ``DELAY`` stay).
RELEASE_STRIPS = frozenset({props.DUE_TIME})
_PARKING_PROPERTIES = (props.REAL_TOPIC, props.REAL_QID, props.DELAY, props.DUE_TIME)

#: Where a parked record goes: its ``DUE_TIME`` (None: nothing parked) and the logical
#: topic it is produced to.
ParkedAt = tuple[int | None, str]


def level_target(real_topic: str, level: int, levels: DelayLevels) -> tuple[int, str]:
    """The delay of ``level`` and the logical topic a record bound for ``real_topic`` and
    parked on it is produced to: the level's topic, or ``real_topic`` itself for a level
    of delay 0, which parks nothing (the record goes where the forwarder would release
    it)."""
    delay = levels.delay_ms(level)
    return delay, real_topic if delay == 0 else levels.topic(level)


def parked_at(delay_ms: int, target: str, now_ms: int) -> ParkedAt:
    """Where a record parked at ``now_ms`` for ``delay_ms`` on ``target`` goes (see
    :func:`level_target`), before a timer's own deadline shortens it: due ``now_ms`` +
    the delay, unless the delay is 0."""
    return (None if delay_ms == 0 else now_ms + delay_ms), target


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
    real_qid: int = ANY_QUEUE,
) -> OutgoingRecord:
    """The record that parks a message on ``level``; ``DUE_TIME`` is ``now_ms`` + its delay.

    For a timer message (``TIMER_DELIVER_MS``) due before the level's delay ends, the due
    time is the delivery time itself. Where and until when: :func:`parked_at` of
    :func:`level_target`.
    """
    due, target = parked_at(*level_target(real_topic, level, levels), now_ms)
    out = dict(properties)
    for name in _PARKING_PROPERTIES:  # set again below: kept last, in this order
        out.pop(name, None)
    out[props.REAL_TOPIC] = validate_topic(real_topic)
    out[props.REAL_QID] = props.encode_int(real_qid)
    if due is None:
        headers = props.to_headers(out)
        return OutgoingRecord(to_kafka_topic(target, namespace), value, key, headers)
    if props.TIMER_DELIVER_MS in properties:
        due = min(due, max(now_ms, props.decode_int(properties, props.TIMER_DELIVER_MS)))
        out.setdefault(props.TIMER_ENQUEUE_MS, props.encode_int(now_ms))
    out[props.DELAY] = props.encode_int(level)
    out[props.DUE_TIME] = props.encode_int(due)
    return OutgoingRecord(
        topic=to_kafka_topic(target, namespace),
        value=value,
        key=key,
        headers=props.to_headers(out),
    )


def first_level(properties: Mapping[str, str], levels: DelayLevels, now_ms: int) -> int | None:
    """The level a producer parks a scheduled or timer message on; None to send it now.

    A ``DELAY`` level of delay 0 is sent now too. A timer hops by delay: the longest one
    that fits, else the shortest.

    Raises:
        MalformedHeaderError: ``TIMER_DELIVER_MS`` is not an integer.
        ConfigError: ``DELAY`` names a level outside the table.
    """
    if props.TIMER_DELIVER_MS in properties:
        remaining = props.decode_int(properties, props.TIMER_DELIVER_MS) - now_ms
        if remaining <= 0:
            return None
        return levels.hop_level(remaining) or levels.shortest_level()
    level = props.decode_int(properties, props.DELAY, 0)
    if level <= 0:
        return None
    level = levels.check(min(level, levels.max_level))
    return level if levels.delay_ms(level) > 0 else None


@dataclass(frozen=True)
class Release:
    """What the forwarder does with a parked record whose due time has come."""

    real_topic: str
    real_qid: int
    properties: dict[str, str]
    next_level: int | None


def release(properties: Mapping[str, str], levels: DelayLevels, now_ms: int) -> Release:
    """Strip ``DUE_TIME``; a timer message not yet due hops on to a level, a due one gets
    RocketMQ's timer properties instead of its hop's ``DELAY``.

    Raises:
        MalformedHeaderError: ``REAL_TOPIC`` is missing or a number is malformed.
        InvalidNameError: ``REAL_TOPIC`` is not a legal topic name.
    """
    real_topic = properties.get(props.REAL_TOPIC)
    if not real_topic:
        raise MalformedHeaderError(f"header {props.REAL_TOPIC} is missing")
    validate_topic(real_topic)
    cleaned = {k: v for k, v in properties.items() if k not in RELEASE_STRIPS}
    next_level = None
    if props.TIMER_DELIVER_MS in cleaned:
        next_level = first_level(cleaned, levels, now_ms)
        if next_level is None:
            cleaned.pop(props.DELAY, None)
            cleaned[props.TIMER_OUT_MS] = cleaned[props.TIMER_DELIVER_MS]
            cleaned[props.TIMER_DEQUEUE_MS] = props.encode_int(now_ms)
    return Release(real_topic, real_qid(properties), cleaned, next_level)


def real_qid(properties: Mapping[str, str]) -> int:
    """The partition of the real topic (``REAL_QID``); :data:`ANY_QUEUE` when absent.

    Raises:
        MalformedHeaderError: ``REAL_QID`` is not an integer >= -1.
    """
    qid = props.decode_int(properties, props.REAL_QID, ANY_QUEUE)
    if qid < ANY_QUEUE:
        raise MalformedHeaderError(f"header {props.REAL_QID}={qid} is not a partition")
    return qid


#: The longest a parked record may take from its ``DUE_TIME`` stamp to the broker's append
#: (a producer's local queue and retries) and still have its delay count from the stamp.
MAX_PARK_LAG_MS = 1_000


def park_lag_ms(level_delay_ms: int) -> int:
    """How much earlier than append time + ``level_delay_ms`` a ``DUE_TIME`` is trusted:
    :data:`MAX_PARK_LAG_MS`, and at most half the delay, so no parker's clock turns a
    level's delay into nothing."""
    return min(MAX_PARK_LAG_MS, level_delay_ms // 2)


def due_time(
    properties: Mapping[str, str], *, append_ms: int | None = None, level_delay_ms: int = 0
) -> int:
    """The epoch ms at which a parked record is due (see the module docstring on clocks).

    Args:
        properties: the parked record's properties.
        append_ms: the broker's append time if the record carries one (LogAppendTime),
            else None: then ``DUE_TIME`` decides alone.
        level_delay_ms: the delay of the level topic the record was read from.

    Raises:
        MalformedHeaderError: ``DUE_TIME`` (always required) or ``TIMER_DELIVER_MS`` is
            missing or not an integer.
    """
    stamped = props.decode_int(properties, props.DUE_TIME)
    if append_ms is None:
        return stamped
    latest = append_ms + level_delay_ms
    due = min(latest, max(stamped, latest - park_lag_ms(level_delay_ms)))
    if props.TIMER_DELIVER_MS in properties:
        due = min(due, props.decode_int(properties, props.TIMER_DELIVER_MS))
    return due


def stamped_due(headers: Sequence[tuple[str, bytes | None]]) -> int | None:
    """The ``DUE_TIME`` of a record this process parked (None: not parked), as its trace
    event records it: what was written, never recomputed. Read from the end: :func:`park`
    writes it last (a record's headers name each property once)."""
    for name, value in reversed(headers):
        if name == props.DUE_TIME and value is not None:
            return int(value)
    return None
