"""Trace events of the hot paths encoded in bulk, straight from the data path's values.

The data path hands the sink what it has at hand (a listener call's messages, an
acknowledged send, a forwarded record, a committed replay chunk) with one append; the
sink's thread calls the functions here, which write each event's single-object encoding
(byte for byte what :func:`rmqcompat.trace.codec.encode` writes for the event the
:class:`~rmqcompat.trace.events.Emitter` builds) without building the event first. The
fields every event of one call shares (who, when, the group, a status) are encoded once
per call; per event only its own fields are. The field order is the schema's
(``trace_event.avsc``); ``tests/unit/trace/test_trace_bulk.py`` checks every function
against the codec.

Every union of the schema is ``["null", T]``: null is written ``00``, a value ``02``
then the value.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from rmqcompat import parking
from rmqcompat import properties as props
from rmqcompat.core import CORE
from rmqcompat.message import Message, MessageExt
from rmqcompat.trace.avro import zigzag_long
from rmqcompat.trace.schema import EVENT_TYPES, HEADER, SCHEMA
from rmqcompat.wire import KafkaRecord, offset_message_id

_NULL, _SOME = b"\x00", b"\x02"
_LONG = 2**63
_INT = 2**31
_KIND = {name: HEADER + zigzag_long(i) for i, name in enumerate(EVENT_TYPES)}
_STATUS_TYPE = next(spec["type"][1] for spec in SCHEMA["fields"] if spec["name"] == "status")
_STATUS = {name: _SOME + zigzag_long(i) for i, name in enumerate(_STATUS_TYPE["symbols"])}
_ORIGIN, _TAGS, _KEYS = props.ORIGIN_MESSAGE_ID, props.TAGS, props.KEYS
#: Encodings of repeating strings (topics, groups): at most this many, then forgotten.
_CACHE_LIMIT = 4096
_cache: dict[str, bytes] = {}
#: The varint of every zig-zagged value below 2**14 (one or two bytes), the same behind a
#: union's ``02``, and 14 bits of a longer varint (two bytes, more to follow).
_VARINT = tuple(zigzag_long((n >> 1) ^ -(n & 1)) for n in range(1 << 14))
_SOME_VARINT = tuple(_SOME + v for v in _VARINT)
_MORE = tuple(bytes(((k & 0x7F) | 0x80, (k >> 7) | 0x80)) for k in range(1 << 14))


def _long(value: int) -> bytes:
    if not -_LONG <= value < _LONG:
        raise OverflowError(f"{value} is outside an Avro long")
    return zigzag_long(value)


def _int(value: int) -> bytes:
    if not -_INT <= value < _INT:
        raise OverflowError(f"{value} is outside an Avro int")
    return zigzag_long(value)


def _str(value: str) -> bytes:
    data = value.encode()
    return zigzag_long(len(data)) + data


def _some_str(value: str | None) -> bytes:
    return _NULL if value is None else _SOME + _str(value)


def _some_long(value: int | None) -> bytes:
    return _NULL if value is None else _SOME + _long(value)


def _some_int(value: int | None) -> bytes:
    return _NULL if value is None else _SOME + _int(value)


def _some_natural(value: int) -> bytes:
    """:func:`_some_long` of a ``value`` >= 0 (an offset, an epoch time), 14 bits a step."""
    if not 0 <= value < _LONG:
        return _SOME + _long(value)
    n = value << 1
    if n < 16384:
        return _SOME_VARINT[n]
    out = _SOME + _MORE[n & 16383]
    n >>= 14
    while n >= 16384:
        out += _MORE[n & 16383]
        n >>= 14
    return out + _VARINT[n]


def _some_small(value: int) -> bytes:
    """:func:`_some_int` of a ``value`` that is mostly small (a partition, a count)."""
    return _SOME_VARINT[value << 1] if 0 <= value < 8192 else _SOME + _int(value)


def _repeating(value: str | None) -> bytes:
    """:func:`_some_str` of a value that repeats from event to event (cached)."""
    if value is None:
        return _NULL
    encoded = _cache.get(value)
    if encoded is None:
        encoded = _SOME + _str(value)
        if len(_cache) >= _CACHE_LIMIT:
            _cache.clear()
        _cache[value] = encoded
    return encoded


def identity(client_id: str, host: str, namespace: str) -> bytes:
    """The encoding of the three fields after the timestamp: who emitted the events."""
    return _str(client_id) + _str(host) + _str(namespace)


#: A listener call for its CONSUME events: (its messages, the indexes that failed, its
#: duration in ms, the failed ones' status, their counts when it ended (None: read from
#: the messages)).
Call = tuple[Sequence[MessageExt], Collection[int], int, str, Sequence[int] | None]


def consumed_calls(who: bytes, at_ms: int, group: str, calls: Iterable[Call]) -> Sequence[bytes]:
    """The CONSUME events of these listener calls at ``at_ms``, each call's ``failed``
    indexes with its ``late`` status, the others SUCCESS; its ``reconsumes`` are the
    messages' counts when the call ended (None: read from the messages, which nobody
    changed since). One core call where it is built: a retry round trip's failed calls
    are one each (batch size 1: 0.43-0.56 us a call against 0.52-0.93 one by one,
    timeit, 2026-11-28)."""
    return _consume_calls(consume_head(who, at_ms, group), _STATUS, calls)


def consume_calls(
    head: bytes, statuses: Mapping[str, bytes], calls: Iterable[Call]
) -> Sequence[bytes]:
    """:func:`consume_events` of each call, all after ``head``, with the status and
    duration of :func:`_outcomes` (``statuses``: each status's encoding, by name) (the
    pure-Python reference of the core's ``consume_calls``)."""
    events: list[bytes] = []
    for msgs, failed, duration_ms, late, reconsumes in calls:
        ok, bad = _outcomes(statuses, late, duration_ms)
        events += consume_events(head, ok, bad, msgs, failed, reconsumes)
    return events


#: SUCCESS, as a CONSUME event's status.
SUCCESS = _STATUS["SUCCESS"]


def consume_head(who: bytes, at_ms: int, group: str) -> bytes:
    """The fields every CONSUME event of a call at ``at_ms`` shares, encoded."""
    return _KIND["CONSUME"] + _long(at_ms) + who + _repeating(group)


def _outcomes(statuses: Mapping[str, bytes], late: str, duration_ms: int) -> tuple[bytes, bytes]:
    """The status and duration of a call's events, encoded: SUCCESS and ``late``."""
    took = _SOME + _long(duration_ms)
    return statuses["SUCCESS"] + took, statuses[late] + took


def consumed_ok(
    who: bytes, at_ms: int, group: str, calls: Iterable[tuple[Sequence[MessageExt], int]]
) -> Sequence[bytes]:
    """The CONSUME events of listener calls that succeeded whole at ``at_ms``, each
    ``(msgs, duration_ms)`` (see :func:`consumed_calls`), in one encoding call. Settlement
    hands them over with consecutive calls of one duration already joined
    (:func:`rmqcompat.consumer.settlement.add_success`)."""
    runs: list[Call] = [(msgs, (), ms, "RECONSUME_LATER", None) for msgs, ms in calls]
    return consumed_calls(who, at_ms, group, runs)


def consume_events(
    head: bytes,
    ok: bytes,
    bad: bytes,
    msgs: Sequence[MessageExt],
    failed: Collection[int],
    reconsumes: Sequence[int] | None,
) -> list[bytes]:
    """The CONSUME events of one call (see :func:`consumed_calls`), each ``head`` (the
    fields the call's events share) then the message's own, with the status and duration
    ``bad`` for the ``failed`` indexes and ``ok`` for the others (a step of
    :func:`consume_calls`)."""
    events: list[bytes] = []
    append, join = events.append, b"".join
    for i, msg in enumerate(msgs):
        get = msg.properties.get
        reconsume = msg.reconsume_times if reconsumes is None else reconsumes[i]
        msg_id = msg.msg_id.encode()
        origin, tags, keys = get(_ORIGIN), get(_TAGS), get(_KEYS)
        append(
            join(
                (
                    head,
                    _repeating(msg.topic),
                    _NULL,  # physical topic
                    _some_small(msg.queue_id),
                    _some_natural(msg.queue_offset),
                    _VARINT[len(msg_id) << 1] if len(msg_id) < 8192 else zigzag_long(len(msg_id)),
                    msg_id,
                    _NULL if origin is None else _SOME + _str(origin),
                    _NULL if tags is None else _SOME + _str(tags),
                    _NULL if keys is None else _SOME + _str(keys),
                    bad if i in failed else ok,
                    _some_small(reconsume),
                    b"\x00\x00\x00",  # delay level, due time, target topic
                    _some_natural(msg.born_timestamp),
                    _NULL,  # reason
                )
            )
        )
    return events


_consume_calls = consume_calls if CORE is None else CORE.consume_calls


#: A send-back the broker stored: ``(at_ms, msg, reconsume_times, level, due_ms,
#: target_topic)``: ``msg``, whose delivery with the stored count ``reconsume_times``
#: failed, sent back for ``level``, due at ``due_ms`` (None: sent straight to its target)
#: in the logical ``target_topic``.
SentBack = tuple[int, MessageExt, int, int, int | None, str]


def sent_back(who: bytes, group: str, sends: Iterable[SentBack]) -> Sequence[bytes]:
    """The SEND_BACK events of ``group``'s stored send-backs (see
    :func:`rmqcompat.trace.hooks.settled_back_run`)."""
    return _send_back_events(_KIND["SEND_BACK"], who, _repeating(group), sends)


def send_back_events(
    kind: bytes, who: bytes, group: bytes, sends: Iterable[SentBack]
) -> Sequence[bytes]:
    """The events of :func:`sent_back`, each starting with ``kind`` (the event type's
    encoding), then its time, ``who`` and ``group`` (encoded); the pure-Python reference
    of the core's ``send_back_events``."""
    events: list[bytes] = []
    stamp: tuple[int, bytes] = (-1, b"")  # the last timestamp's encoding (often repeats)
    for at_ms, msg, reconsume_times, level, due_ms, target_topic in sends:
        if at_ms != stamp[0]:
            stamp = (at_ms, _long(at_ms))
        get = msg.properties.get
        events.append(
            b"".join(
                (
                    kind,
                    stamp[1],
                    who,
                    group,
                    _repeating(msg.topic),
                    _NULL,  # physical topic
                    _some_small(msg.queue_id),
                    _some_natural(msg.queue_offset),
                    _str(msg.msg_id),
                    _some_str(get(_ORIGIN)),
                    _some_str(get(_TAGS)),
                    _some_str(get(_KEYS)),
                    b"\x00\x00",  # status, duration
                    _some_small(reconsume_times),
                    _some_small(level),
                    _NULL if due_ms is None else _some_natural(due_ms),
                    _repeating(target_topic),
                    _some_natural(msg.born_timestamp),
                    _NULL,  # reason
                )
            )
        )
    return events


_send_back_events = send_back_events if CORE is None else CORE.send_back_events


#: An acknowledged send: ``(at_ms, message, msg_id, physical_topic, born_ms, headers)``.
Acknowledged = tuple[int, Message, str, str, int | None, Sequence[tuple[str, bytes | None]]]


def published(who: bytes, acknowledged: Iterable[Acknowledged]) -> Sequence[bytes]:
    """The PUBLISH events of ``acknowledged`` sends (see
    :func:`rmqcompat.trace.hooks.published`)."""
    return _publish_events(_KIND["PUBLISH"], who, acknowledged)


def publish_events(
    kind: bytes, who: bytes, acknowledged: Iterable[Acknowledged]
) -> Sequence[bytes]:
    """The events of :func:`published`, each starting with ``kind`` (the event type's
    encoding), then its time and ``who``; the pure-Python reference of the core's
    ``publish_events``."""
    return [
        _publish_event(kind, who, at_ms, message, msg_id, physical_topic, born_ms, headers)
        for at_ms, message, msg_id, physical_topic, born_ms, headers in acknowledged
    ]


def _publish_event(
    kind: bytes,
    who: bytes,
    at_ms: int,
    message: Message,
    msg_id: str,
    physical_topic: str,
    born_ms: int | None,
    headers: Sequence[tuple[str, bytes | None]],
) -> bytes:
    due_ms = message.deliver_time_ms
    if due_ms is None and message.delay_time_level:
        due_ms = parking.stamped_due(headers)
    return b"".join(
        (
            kind,
            _long(at_ms),
            who,
            _NULL,  # group
            _repeating(message.topic),
            _repeating(physical_topic),
            b"\x00\x00",  # partition, offset
            _str(msg_id),
            _NULL,  # origin msg id
            _some_str(message.tags),
            _some_str(props.join_keys(message.keys)),
            b"\x00\x00\x00",  # status, duration, reconsume times
            _some_int(message.delay_time_level or None),
            _some_long(due_ms),
            _NULL,  # target topic
            _some_long(born_ms),
            _NULL,  # reason
        )
    )


_publish_events = publish_events if CORE is None else CORE.publish_events


#: A property the trace records as a number: a decimal integer, ASCII digits only.
_DECIMAL_INT = re.compile(r"-?[0-9]{1,10}")


def _int_property(properties: Mapping[str, str], name: str) -> int | None:
    """The property as an Avro int, or None when absent or not one: a parked record's
    headers are whatever its producer wrote, and one odd value must not cost the events
    of a whole drain."""
    text = properties.get(name)
    if text is None or not _DECIMAL_INT.fullmatch(text):
        return None
    value = int(text)
    return value if -_INT <= value < _INT else None


#: A forwarded record: ``(at_ms, parked source, its parsed properties, due_ms)``.
Forwarded = tuple[int, KafkaRecord, Mapping[str, str], int]


def forwarded(who: bytes, records: Iterable[Forwarded]) -> Sequence[bytes]:
    """The FORWARD events of parked records forwarded (see
    :func:`rmqcompat.trace.hooks.forwarded`)."""
    return _forward_events(_KIND["FORWARD"], who, records)


def forward_events(kind: bytes, who: bytes, records: Iterable[Forwarded]) -> Sequence[bytes]:
    """The FORWARD events of :func:`forwarded`, each starting with ``kind`` (the event
    type's encoding) and ``who`` (the pure-Python reference of the core's
    ``forward_events``). ``properties`` are decoded headers: text."""
    return [_forward_event(kind, who, *record) for record in records]


def _forward_event(
    kind: bytes,
    who: bytes,
    at_ms: int,
    source: KafkaRecord,
    properties: Mapping[str, str],
    due_ms: int,
) -> bytes:
    partition, offset = source.partition() or 0, source.offset() or 0
    physical = source.topic() or ""
    real_topic = properties.get(props.REAL_TOPIC, "")
    msg_id = properties.get(props.UNIQ_KEY) or offset_message_id(physical, partition, offset)
    return b"".join(
        (
            kind,
            _long(at_ms),
            who,
            _NULL,  # group
            _repeating(properties.get(props.RETRY_TOPIC, real_topic)),
            _repeating(physical),
            _SOME + _int(partition),
            _SOME + _long(offset),
            _str(msg_id),
            _some_str(properties.get(_ORIGIN)),
            b"\x00\x00\x00\x00",  # tags, keys, status, duration
            _some_int(_int_property(properties, props.RECONSUME_TIME)),
            _some_int(_int_property(properties, props.DELAY)),
            _SOME + _long(due_ms),
            _repeating(real_topic),
            b"\x00\x00",  # born time, reason
        )
    )


_forward_events = forward_events if CORE is None else CORE.forward_events


#: A dead letter sent again: a sequence holding its msg id, original topic, the topic it
#: was replayed to and its origin msg id (a ledger row, say), at :data:`Places`.
Replayed = Sequence[Any]
#: Where in a :data:`Replayed` its (msg id, original topic, replayed to, origin msg id)
#: are.
Places = tuple[int, int, int, int]
#: The places of a :data:`Replayed` that holds those four alone, in that order.
IN_ORDER: Places = (0, 1, 2, 3)


def replayed(
    who: bytes,
    at_ms: int,
    group: str,
    letters: Iterable[Replayed],
    command: str,
    places: Places = IN_ORDER,
) -> Sequence[bytes]:
    """The REPLAY events of dead letters of ``group`` sent again at ``at_ms``."""
    head = _KIND["REPLAY"] + _long(at_ms) + who + _repeating(group)
    return _replay_events(head, _some_str(command), letters, places)


def replay_events(
    head: bytes, reason: bytes, letters: Iterable[Replayed], places: Places = IN_ORDER
) -> Sequence[bytes]:
    """The events of :func:`replayed`, each starting with ``head`` (their shared fields up
    to the group, encoded) and ending with ``reason`` (encoded), each letter's fields read
    at ``places``; the pure-Python reference of the core's ``replay_events``."""
    at_id, at_topic, at_target, at_origin = places
    return [
        b"".join(
            (
                head,
                _repeating(letter[at_topic]),
                b"\x00\x00\x00",  # physical topic, partition, offset
                _str(letter[at_id]),
                _some_str(letter[at_origin]),
                b"\x00" * 7,  # tags ... due time
                _repeating(letter[at_target]),
                _NULL,  # born time
                reason,
            )
        )
        for letter in letters
    ]


_replay_events = replay_events if CORE is None else CORE.replay_events
