"""Trace records decoded a column at a time: numpy over a whole Arrow batch of values.

Avro's binary records have no fixed layout (varints, length-prefixed strings), but the
trace schema is flat, so field ``i`` of every record in a batch can be read at once: one
array holds each record's read position, and each field moves all positions forward
together. A batch of 50,000 records takes some 30 numpy passes instead of 50,000 calls
of the per-record reader (:func:`rmqcompat.trace.codec.decode`), and the string columns
are built as Arrow buffers directly (offsets plus one gather of their bytes).

Records the columnar pass cannot read (a wrong header, a truncated body, a bad union or
enum index, invalid UTF-8, a value outside its Avro type) are handed to
:func:`~rmqcompat.trace.codec.decode`, whose :class:`TraceDecodeError` message becomes the
record's error, so both readers refuse the same records for the same reasons.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]

from rmqcompat.trace.codec import TraceDecodeError, decode
from rmqcompat.trace.schema import HEADER, HEADER_LENGTH, SCHEMA

_INT32 = (-(2**31), 2**31 - 1)
#: Longest varint the per-record reader accepts (bytes).
_VARINT_BYTES = 10
_HEADER = np.frombuffer(HEADER, dtype=np.uint8)


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


class _Batch:
    """The state of one columnar pass: the records' bytes and each one's read position.

    Positions never pass their record's end (a read that would marks the record bad), and
    the bytes are padded, so every read stays inside the buffer without a bounds check.
    """

    def __init__(self, values: Any) -> None:
        values = values.cast(pa.large_binary()) if pa.types.is_binary(values.type) else values
        self.size = len(values)
        _, offsets_buffer, data_buffer = values.buffers()
        offsets = np.frombuffer(offsets_buffer, dtype=np.int64)[
            values.offset : values.offset + self.size + 1
        ]
        data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer else np.empty(0, np.uint8)
        self.data = np.concatenate([data, np.zeros(_VARINT_BYTES + HEADER_LENGTH, np.uint8)])
        self.start = offsets[:-1]
        self.end = offsets[1:].copy()
        if values.null_count:  # a null value: an empty record
            nulls = values.is_null().to_numpy(zero_copy_only=False)
            self.end[nulls] = self.start[nulls]
        self.bad = self.end - self.start < HEADER_LENGTH
        for i, expected in enumerate(_HEADER):
            self.bad |= self.data[self.start + i] != expected
        self.pos = np.minimum(self.start + HEADER_LENGTH, self.end)

    def varint(self) -> tuple[Any, Any, Any]:
        """At every record's position: the zig-zag decoded varint (int64), its length in
        bytes, and whether it is not one the per-record reader takes as a 64-bit value."""
        first = self.data[self.pos]
        raw = (first & 0x7F).astype(np.uint64)
        length = np.ones(self.size, dtype=np.int64)
        broken = np.zeros(self.size, dtype=bool)
        going = np.flatnonzero(first >= 0x80)
        shift = 7
        while going.size:
            more = self.data[self.pos[going] + length[going]]
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

    def record(self, row: int) -> bytes:
        return self.data[self.start[row] : self.end[row]].tobytes()


def decode_columns(values: Any, names: Sequence[str] | None = None) -> tuple[list[Any], Any]:
    """Decode a batch of trace records into Arrow columns.

    Args:
        values: an Arrow ``binary`` or ``large_binary`` array of single-object encoded
            trace records (a null is an unreadable record).
        names: the fields wanted, in this order (None: every field, in schema order).

    Returns:
        ``(columns, errors)``: one Arrow array per wanted field (``string`` for strings and
        enum symbols, ``int64`` / ``int32`` for longs and ints; null where the event has
        none) and an Arrow ``string`` array, null for records read, else why the record
        is unreadable (its fields are then null).

    Raises:
        KeyError: a name is not a field of the trace schema.
    """
    wanted = list(names) if names is not None else [field.name for field in FIELDS]
    if len(values) == 0:
        types = {field.name: field.arrow_type for field in FIELDS}
        return [pa.array([], types[name]) for name in wanted], pa.array([], pa.string())
    batch = _Batch(values)
    kept = set(wanted)
    read = {field.name: batch.read(field, field.name in kept) for field in FIELDS}
    columns = [read[name] for name in wanted]
    errors: list[str | None] = [None] * batch.size
    if batch.bad.any():
        for row in np.flatnonzero(batch.bad).tolist():
            errors[row] = _why(batch.record(row))
        unreadable = pa.array(batch.bad)
        columns = [pc.if_else(unreadable, pa.scalar(None, c.type), c) for c in columns]
    return columns, pa.array(errors, pa.string())


def _why(record: bytes) -> str:
    """The per-record reader's reason for refusing ``record``."""
    try:
        decode(record)
    except TraceDecodeError as exc:
        return str(exc)
    # it reads the record, but a value does not fit its type's Arrow column
    return "trace record has a value outside its Avro type's range"
