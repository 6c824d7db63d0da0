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

from collections.abc import Collection, Iterable, Mapping, Sequence

from rmqcompat import parking
from rmqcompat import properties as props
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


def consumed(
    who: bytes,
    at_ms: int,
    group: str,
    msgs: Sequence[MessageExt],
    failed: Collection[int],
    late: str,
    duration_ms: int,
    reconsumes: Sequence[int] | None,
) -> list[bytes]:
    """The CONSUME events of one listener call on ``msgs`` at ``at_ms``: the ``failed``
    indexes ``late``, the others SUCCESS; ``reconsumes`` are the messages' counts when
    the call ended (None: read from the messages, which nobody changed since)."""
    head = _KIND["CONSUME"] + _long(at_ms) + who + _repeating(group)
    took = _SOME + _long(duration_ms)
    ok, bad = _STATUS["SUCCESS"] + took, _STATUS[late] + took
    events = []
    for i, msg in enumerate(msgs):
        get = msg.properties.get
        reconsume = msg.reconsume_times if reconsumes is None else reconsumes[i]
        events.append(
            b"".join(
                (
                    head,
                    _repeating(msg.topic),
                    _NULL,  # physical topic
                    _SOME + _int(msg.queue_id),
                    _SOME + _long(msg.queue_offset),
                    _str(msg.msg_id),
                    _some_str(get(_ORIGIN)),
                    _some_str(get(_TAGS)),
                    _some_str(get(_KEYS)),
                    bad if i in failed else ok,
                    _SOME + _int(reconsume),
                    b"\x00\x00\x00",  # delay level, due time, target topic
                    _SOME + _long(msg.born_timestamp),
                    _NULL,  # reason
                )
            )
        )
    return events


def published(
    who: bytes,
    at_ms: int,
    message: Message,
    msg_id: str,
    physical_topic: str,
    born_ms: int | None,
    headers: Iterable[tuple[str, bytes | None]],
) -> list[bytes]:
    """The PUBLISH event of ``message``, acknowledged at ``at_ms`` (see
    :func:`rmqcompat.trace.hooks.published`)."""
    due_ms = message.deliver_time_ms
    if due_ms is None and message.delay_time_level:
        due_ms = parking.stamped_due(headers)
    return [
        b"".join(
            (
                _KIND["PUBLISH"],
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
    ]


def _int_property(properties: Mapping[str, str], name: str) -> int | None:
    text = properties.get(name)
    return int(text) if text is not None and text.lstrip("-").isdigit() else None


def forwarded(
    who: bytes, at_ms: int, source: KafkaRecord, properties: Mapping[str, str], due_ms: int
) -> list[bytes]:
    """The FORWARD event of parked ``source`` (see :func:`rmqcompat.trace.hooks.forwarded`),
    delivered at ``at_ms``."""
    partition, offset = source.partition() or 0, source.offset() or 0
    physical = source.topic() or ""
    real_topic = properties.get(props.REAL_TOPIC, "")
    msg_id = properties.get(props.UNIQ_KEY) or offset_message_id(physical, partition, offset)
    return [
        b"".join(
            (
                _KIND["FORWARD"],
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
    ]


def replayed(
    who: bytes,
    at_ms: int,
    group: str,
    letters: Iterable[tuple[str, str, str, str | None]],
    command: str,
) -> list[bytes]:
    """The REPLAY events of dead letters of ``group`` sent again at ``at_ms``: each
    ``(msg_id, original topic, replayed to, origin msg id)``."""
    head = _KIND["REPLAY"] + _long(at_ms) + who + _repeating(group)
    reason = _some_str(command)
    return [
        b"".join(
            (
                head,
                _repeating(topic),
                b"\x00\x00\x00",  # physical topic, partition, offset
                _str(msg_id),
                _some_str(origin),
                b"\x00" * 7,  # tags ... due time
                _repeating(replayed_to),
                _NULL,  # born time
                reason,
            )
        )
        for msg_id, topic, replayed_to, origin in letters
    ]
