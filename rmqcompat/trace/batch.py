"""Trace records: several encoded events in one Kafka record (``trace_batch.avsc``).

Producing one Kafka record per event made the record, not the event, the unit every
reader and writer pays for (a ``produce`` call per event on the client, a row per event
in Spark's ``kafka`` source). The sink packs the events it drains into records of at
most :data:`MAX_EVENTS` events and about :data:`MAX_BYTES` bytes, as RocketMQ's trace
dispatcher packs trace contexts into one message. A record is the single-object
encoding of a ``TraceBatch``: an Avro array of ``bytes``, each item one event in its own
single-object encoding (:func:`rmqcompat.trace.codec.encode`), so fastavro, or any Avro
reader given both schemas, reads it.

A record holding exactly one event's single-object encoding (what versions before
batching wrote) is read as that event.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import chain

from rmqcompat.core import CORE
from rmqcompat.trace.avro import zigzag_long
from rmqcompat.trace.codec import TraceDecodeError, TraceRecord, check_header, decode
from rmqcompat.trace.schema import BATCH_HEADER, HEADER, HEADER_LENGTH

#: Events per trace record at most.
MAX_EVENTS = 200
#: A record's events' encodings stay within this many bytes (an event larger than that
#: goes alone); far below Kafka's 1 MB default record limit.
MAX_BYTES = 64 * 1024
#: The end of an Avro array (a block of zero items).
_END = b"\x00"


def encode_batch(events: Sequence[bytes]) -> bytes:
    """The trace record holding ``events`` (each an event's single-object encoding), in
    this order: one array block (none if there are no events), then the array's end."""
    return _encode_batch(BATCH_HEADER, events)


def _encode_batch(header: bytes, events: Sequence[bytes]) -> bytes:
    parts = [header]
    if events:
        parts.append(zigzag_long(len(events)))
    for event in events:
        parts.append(zigzag_long(len(event)))
        parts.append(event)
    parts.append(_END)
    return b"".join(parts)


def pack(parts: Iterable[Sequence[bytes]]) -> list[tuple[bytes, int]]:
    """The events of ``parts`` (each a sequence of encoded events, as a bulk encoder
    returns them) as trace records, in order: ``(record, events in it)``; each record
    holds at most :data:`MAX_EVENTS` events and :data:`MAX_BYTES` of them, or one larger
    event (so a record the broker refuses as too large loses that event only)."""
    return _pack_events(list(parts), BATCH_HEADER, MAX_EVENTS, MAX_BYTES)


def pack_events(
    parts: Sequence[Sequence[bytes]], header: bytes, max_events: int, max_bytes: int
) -> list[tuple[bytes, int]]:
    """:func:`pack` with its limits given: the records (``header`` first) of the events of
    ``parts`` (the pure-Python reference of the core's ``pack_events``, which also reads
    the core's ``Encodings`` without an object an event)."""
    if max_events < 1:
        raise ValueError("a trace record holds at least one event")
    records: list[tuple[bytes, int]] = []
    chunk: list[bytes] = []
    size = 0
    for event in chain.from_iterable(parts):
        if chunk and size + len(event) > max_bytes:
            records.append((_encode_batch(header, chunk), len(chunk)))
            chunk, size = [], 0
        chunk.append(event)
        size += len(event)
        if len(chunk) == max_events:
            records.append((_encode_batch(header, chunk), len(chunk)))
            chunk, size = [], 0
    if chunk:
        records.append((_encode_batch(header, chunk), len(chunk)))
    return records


_pack_events = pack_events if CORE is None else CORE.pack_events


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """The zig-zag varint at ``pos``: ``(value, position after it)``."""
    raw = shift = 0
    while True:
        if pos >= len(data):
            raise TraceDecodeError("trace record ends inside a number")
        byte = data[pos]
        pos += 1
        raw |= (byte & 0x7F) << shift
        if byte < 0x80:
            return (raw >> 1) ^ -(raw & 1), pos
        shift += 7
        if shift > 63:
            raise TraceDecodeError("trace record holds a number longer than 64 bits")


def event_spans(value: bytes) -> list[tuple[int, int]]:
    """Where each event of trace record ``value`` lies in it: ``(start, end)`` of its
    single-object encoding, in order (the events themselves are not checked here).

    Raises:
        TraceDecodeError: ``value`` is neither an event nor a batch of this version's
            schemas, or its array is malformed (truncated, bytes after its end).
    """
    if value[:HEADER_LENGTH] == HEADER:
        return [(0, len(value))]
    check_header(value, BATCH_HEADER)
    spans: list[tuple[int, int]] = []
    pos = HEADER_LENGTH
    while True:
        count, pos = _varint(value, pos)
        if count == 0:
            break
        if count < 0:  # a block that also gives its size in bytes (Avro allows it)
            count = -count
            _, pos = _varint(value, pos)
        for _ in range(count):
            length, pos = _varint(value, pos)
            if length < 0 or pos + length > len(value):
                raise TraceDecodeError("trace batch item runs past the record's end")
            spans.append((pos, pos + length))
            pos += length
    if pos != len(value):
        raise TraceDecodeError(f"trace batch has {len(value) - pos} bytes after its end")
    return spans


def decode_record(value: bytes) -> list[TraceRecord]:
    """Every event of trace record ``value``, in order.

    Raises:
        TraceDecodeError: the record, or an event in it, is not readable (see
            :func:`event_spans` and :func:`~rmqcompat.trace.codec.decode`).
    """
    return [decode(value[start:end]) for start, end in event_spans(value)]
