"""Trace records decoded a column at a time: numpy over a whole Arrow batch of values.

A trace record holds a batch of events (:mod:`rmqcompat.trace.batch`): an Avro array
whose items are the events' single-object encodings. First every record's array is
walked at once, one item per step for all records together, which gives each event's
place in the batch's bytes; a record this walk cannot follow (another array layout,
a truncated or malformed array) is handed to :func:`~rmqcompat.trace.batch.event_spans`.
A record that is a single event (what versions before batching wrote) is one event.

Then the events are decoded. Avro's binary records have no fixed layout (varints,
length-prefixed strings), but the event schema is flat, so field ``i`` of every event
can be read at once: one array holds each event's read position, and each field moves
all positions forward together. 50,000 events take some 30 numpy passes instead of
50,000 calls of the per-event reader (:func:`rmqcompat.trace.codec.decode`), and the
string columns are built as Arrow buffers directly (offsets plus one gather of their
bytes).

Events the columnar pass cannot read (a wrong header, a truncated body, a bad union or
enum index, invalid UTF-8, a value outside its Avro type) are handed to
:func:`~rmqcompat.trace.codec.decode`, and records that hold no readable array to
:func:`~rmqcompat.trace.batch.event_spans`: their :class:`TraceDecodeError` message
becomes the row's error, so both readers refuse the same events for the same reasons.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]

from rmqcompat.trace.batch import event_spans
from rmqcompat.trace.codec import TraceDecodeError, decode
from rmqcompat.trace.schema import BATCH_HEADER, HEADER, HEADER_LENGTH, SCHEMA

_INT32 = (-(2**31), 2**31 - 1)
#: Longest varint the per-record reader accepts (bytes).
_VARINT_BYTES = 10
_HEADER = np.frombuffer(HEADER, dtype=np.uint8)
_BATCH_HEADER = np.frombuffer(BATCH_HEADER, dtype=np.uint8)


@dataclass(frozen=True)
class Field:
    """One field of the flat trace schema, as the columnar reader needs it."""

    name: str
    kind: str  # long, int, string, enum
    null_index: int | None  # index of "null" in a [null, T] union; None: not a union
    symbols: tuple[str, ...] = ()

    @property
    def arrow_type(self) -> Any:
        return {"long": pa.int64(), "int": pa.int32()}.get(self.kind, pa.string())


def _field(spec: Mapping[str, Any]) -> Field:
    kind = spec["type"]
    null_index = None
    if isinstance(kind, list):
        null_index = kind.index("null")
        kind = kind[1 - null_index]
    if isinstance(kind, dict):
        return Field(spec["name"], "enum", null_index, tuple(kind["symbols"]))
    return Field(spec["name"], str(kind), null_index)


#: Every field of the trace schema, in the order the records hold them.
FIELDS: tuple[Field, ...] = tuple(_field(spec) for spec in SCHEMA["fields"])


def _varint(data: Any, pos: Any) -> tuple[Any, Any, Any]:
    """At every position of ``pos`` in ``data`` (padded): the zig-zag decoded varint
    (int64), its length in bytes, and whether it is not one the per-record reader takes
    as a 64-bit value."""
    first = data[pos]
    raw = (first & 0x7F).astype(np.uint64)
    length = np.ones(len(pos), dtype=np.int64)
    broken = np.zeros(len(pos), dtype=bool)
    going = np.flatnonzero(first >= 0x80)
    shift = 7
    while going.size:
        more = data[pos[going] + length[going]]
        if shift == 63:  # the 10th byte: only its lowest bit fits 64 bits; no 11th
            broken[going[(more & 0x7E) != 0]] = True
            broken[going[more >= 0x80]] = True
        raw[going] |= (more & 0x7F).astype(np.uint64) << np.uint64(shift)
        length[going] += 1
        going = going[more >= 0x80]
        shift += 7
        if shift > 63:
            break
    value = (raw >> np.uint64(1)).view(np.int64) ^ -(raw & np.uint64(1)).view(np.int64)
    return value, length, broken


def _bytes_at(data: Any, start: Any, end: Any, row: int) -> bytes:
    """The bytes of range ``row`` of ``[start, end)`` in ``data``."""
    return bytes(data[start[row] : end[row]])


def _starts_with(data: Any, start: Any, end: Any, header: Any) -> Any:
    """Whether each of the byte ranges ``[start, end)`` of ``data`` begins with ``header``."""
    found = end - start >= len(header)
    for i, expected in enumerate(header):
        found &= data[start + i] == expected
    return found


class _Records:
    """An Arrow array of trace records as numpy: the bytes (padded, so that reads a few
    bytes past the last record stay inside) and each record's ``[start, end)``."""

    def __init__(self, values: Any) -> None:
        self.size = len(values)
        _, offsets_buffer, data_buffer = values.buffers()
        width = np.int32 if pa.types.is_binary(values.type) else np.int64
        offsets = np.frombuffer(offsets_buffer, dtype=width)[
            values.offset : values.offset + self.size + 1
        ].astype(np.int64)
        # a slice of an array shares the whole array's data: copy only its own bytes
        first, last = int(offsets[0]), int(offsets[-1])
        data = np.frombuffer(data_buffer or b"", dtype=np.uint8)[first:last]
        offsets -= first
        self.data = np.empty(last - first + _VARINT_BYTES + HEADER_LENGTH, np.uint8)
        self.data[: last - first] = data
        self.data[last - first :] = 0
        self.start = offsets[:-1]
        self.end = offsets[1:].copy()
        if values.null_count:  # a null value: an empty record
            nulls = values.is_null().to_numpy(zero_copy_only=False)
            self.end[nulls] = self.start[nulls]

    def bytes_of(self, row: int) -> bytes:
        return _bytes_at(self.data, self.start, self.end, row)


class _Spans(NamedTuple):
    """The events of a batch of records: each one's bytes ``[start, end)``, the record
    holding it, its index in that record, and the record's error if it holds no
    readable array (then it is one empty event)."""

    start: Any
    end: Any
    record: Any
    index: Any
    errors: dict[int, str]


def _spans(records: _Records) -> _Spans:
    """Every event of ``records``, in record order and in order within each record."""
    data, start, end = records.data, records.start, records.end
    batch = _starts_with(data, start, end, _BATCH_HEADER)
    # not a batch: the record is one event (or unreadable: the event reader says why)
    rows = np.flatnonzero(~batch)
    parts = [(start[rows], end[rows], rows, np.zeros(len(rows), np.int64))]
    rows = np.flatnonzero(batch)
    pos = start[rows] + HEADER_LENGTH
    count, length, broken = _varint(data, pos)
    # every item takes a byte at least; other block layouts go to the per-record reader
    walked = ~broken & (count > 0) & (count < end[rows] - pos)
    pos += length
    items = []
    for i in range(int(count[walked].max(initial=0))):
        going = np.flatnonzero(walked & (count > i))
        size, length, broken = _varint(data, pos[going])
        first = pos[going] + length
        after = first + size
        fits = ~broken & (size >= 0) & (after <= end[rows[going]])
        walked[going[~fits]] = False
        pos[going] = np.where(fits, after, pos[going])
        items.append((first, after, going, i))
    # one block, then the array's end (a zero count) as the record's last byte
    walked &= (pos + 1 == end[rows]) & (data[pos] == 0)
    for first, after, going, i in items:
        keep = walked[going]
        index = np.full(int(keep.sum()), i, np.int64)
        parts.append((first[keep], after[keep], rows[going[keep]], index))
    errors: dict[int, str] = {}
    for row in rows[~walked].tolist():
        try:
            found = event_spans(records.bytes_of(row))
        except TraceDecodeError as exc:
            errors[row] = str(exc)
            found = [(0, 0)]
        offset = start[row]
        first = np.array([offset + begin for begin, _ in found], np.int64)
        after = np.array([offset + finish for _, finish in found], np.int64)
        index = np.arange(len(found), dtype=np.int64)
        parts.append((first, after, np.full(len(found), row, np.int64), index))
    first, after, record, index = (np.concatenate(column) for column in zip(*parts, strict=True))
    order = np.lexsort((index, record))
    return _Spans(first[order], after[order], record[order], index[order], errors)


class _Batch:
    """The state of one columnar pass over events: their bytes and each one's read
    position.

    Positions never pass their event's end (a read that would marks the event bad), and
    the bytes are padded, so every read stays inside the buffer without a bounds check.
    """

    def __init__(self, data: Any, start: Any, end: Any) -> None:
        self.data, self.start, self.end = data, start, end
        self.size = len(start)
        self.bad = ~_starts_with(data, start, end, _HEADER)
        self.pos = np.minimum(self.start + HEADER_LENGTH, self.end)

    def varint(self) -> tuple[Any, Any, Any]:
        """:func:`_varint` at every event's position."""
        return _varint(self.data, self.pos)

    def advance(self, length: Any) -> None:
        """Moves every record ``length`` bytes on; one read past its end is bad (and stays
        at its end, whatever length its broken bytes gave)."""
        room = self.end - self.pos
        self.bad |= length > room
        self.pos += np.minimum(length, room)

    def branch(self, null_index: int) -> Any:
        """Reads a ``[null, T]`` union's index; True where the record has a value."""
        first = self.data[self.pos]
        if ((first == 0) | (first == 2)).all():  # the usual one-byte spelling
            index, length, broken = first >> 1, 1, False
        else:
            index, length, broken = self.varint()
        self.bad |= broken | ((index != 0) & (index != 1))
        self.advance(length)
        return index == 1 - null_index

    def read(self, field: Field, keep: bool) -> Any:
        """The column of ``field`` (an Arrow array if ``keep``, else None: only skipped)."""
        present = None if field.null_index is None else self.branch(field.null_index)
        value, length, broken = self.varint()
        if present is not None:
            length = np.where(present, length, 0)
            broken &= present
        self.bad |= broken
        self.advance(length)
        if field.kind == "string":
            return self._string(value, present, keep)
        wrong = (
            (value < 0) | (value >= len(field.symbols))
            if field.kind == "enum"
            else (value < _INT32[0]) | (value > _INT32[1])
            if field.kind == "int"
            else None
        )
        if wrong is not None:
            self.bad |= wrong if present is None else wrong & present
        if not keep:
            return None
        mask = None if present is None else ~present
        if field.kind == "enum":
            indices = pa.array(np.clip(value, 0, len(field.symbols) - 1), mask=mask)
            return pa.array(field.symbols, pa.string()).take(indices)
        return pa.array(value.astype(np.int32) if field.kind == "int" else value, mask=mask)

    def _string(self, length: Any, present: Any, keep: bool) -> Any:
        begin = self.pos.copy()
        if present is not None:
            length = np.where(present, length, 0)
        self.bad |= length < 0
        self.advance(np.maximum(length, 0))
        if not keep:
            return None
        sizes = np.where(self.bad, 0, np.maximum(length, 0))  # bad records' bytes: none
        offsets = np.zeros(self.size + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        gather = np.arange(offsets[-1], dtype=np.int64) + np.repeat(begin - offsets[:-1], sizes)
        validity = None
        if present is not None:
            validity = pa.py_buffer(np.packbits(present, bitorder="little"))
        column = pa.LargeStringArray.from_buffers(
            self.size, pa.py_buffer(offsets), pa.py_buffer(self.data[gather]), validity
        )
        try:
            column.validate(full=True)  # UTF-8
        except pa.ArrowInvalid:
            self._mark_invalid_utf8(column)
        return column.cast(pa.string())

    def _mark_invalid_utf8(self, column: Any) -> None:
        for row, value in enumerate(column.view(pa.large_binary()).to_pylist()):
            if value is not None:
                try:
                    value.decode()
                except UnicodeDecodeError:
                    self.bad[row] = True

    def event(self, row: int) -> bytes:
        return _bytes_at(self.data, self.start, self.end, row)


class Decoded(NamedTuple):
    """The events of a batch of trace records, one row each (see :func:`decode_columns`)."""

    columns: list[Any]
    errors: Any
    records: Any
    index: Any


def decode_columns(values: Any, names: Sequence[str] | None = None) -> Decoded:
    """Decode a batch of trace records into Arrow columns, one row per event.

    Args:
        values: an Arrow ``binary`` or ``large_binary`` array of trace records, each a
            batch of events or one event (a null is an unreadable record).
        names: the fields wanted, in this order (None: every field, in schema order).

    Returns:
        ``columns``: one Arrow array per wanted field (``string`` for strings and enum
        symbols, ``int64`` / ``int32`` for longs and ints; null where the event has none);
        ``errors``: an Arrow ``string`` array, null for events read, else why the event
        (or the record holding it, then one row) is unreadable (its fields are then
        null); ``records``: the row of ``values`` each event came from (numpy int64),
        in order; ``index``: the event's index within its record (Arrow ``int32``).

    Raises:
        KeyError: a name is not a field of the trace schema.
    """
    wanted = list(names) if names is not None else [field.name for field in FIELDS]
    types = {field.name: field.arrow_type for field in FIELDS}
    missing = [name for name in wanted if name not in types]
    if missing:
        raise KeyError(missing[0])
    if len(values) == 0:
        return Decoded(
            [pa.array([], types[name]) for name in wanted],
            pa.array([], pa.string()),
            np.empty(0, np.int64),
            pa.array([], pa.int32()),
        )
    records = _Records(values)
    spans = _spans(records)
    batch = _Batch(records.data, spans.start, spans.end)
    kept = set(wanted)
    read = {field.name: batch.read(field, field.name in kept) for field in FIELDS}
    columns = [read[name] for name in wanted]
    errors: list[str | None] = [None] * batch.size
    if batch.bad.any():
        for row in np.flatnonzero(batch.bad).tolist():
            record = int(spans.record[row])
            errors[row] = spans.errors.get(record) or _why(batch.event(row))
        unreadable = pa.array(batch.bad)
        columns = [pc.if_else(unreadable, pa.scalar(None, c.type), c) for c in columns]
    index = pa.array(spans.index.astype(np.int32))
    return Decoded(columns, pa.array(errors, pa.string()), spans.record, index)


def _why(event: bytes) -> str:
    """The per-event reader's reason for refusing ``event``."""
    try:
        decode(event)
    except TraceDecodeError as exc:
        return str(exc)
    # it reads the event, but a value does not fit its type's Arrow column
    return "trace record has a value outside its Avro type's range"
