"""The columnar trace decoder reads what the per-record reader reads, and refuses what it
refuses with the same message (no Spark: Arrow arrays in, Arrow arrays out): records
holding one event, and records holding a batch of events."""

from __future__ import annotations

import random
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pytest

from rmqcompat.spark.columnar import FIELDS, decode_columns
from rmqcompat.trace import BATCH_HEADER, HEADER, TraceDecodeError, decode, encode, encode_batch
from rmqcompat.trace.avro import zigzag_long
from rmqcompat.trace.batch import event_spans
from rmqcompat.trace.schema import EVENT_TYPES

_STATUSES = ["SUCCESS", "RECONSUME_LATER", "EXCEPTION", "TIME_OUT"]


def _event(rnd: random.Random) -> dict[str, Any]:
    def maybe(value: Any) -> Any:
        return None if rnd.random() < 0.3 else value

    return {
        "event": rnd.choice(EVENT_TYPES),
        "timestamp_ms": rnd.choice([0, 1, -1, 1_900_000_000_000, 2**63 - 1, -(2**63)]),
        "client_id": f"host@{rnd.randrange(10**6)}@é",
        "host": "h" * rnd.randrange(0, 300),  # lengths of one and two varint bytes
        "namespace": "",
        "group": maybe(rnd.choice(["G", "グループ", ""])),
        "topic": maybe("T"),
        "partition": maybe(rnd.choice([0, 2**31 - 1, -(2**31)])),
        "offset": maybe(rnd.randrange(-(2**40), 2**40)),
        "msg_id": f"m{rnd.randrange(100)}",
        "status": maybe(rnd.choice(_STATUSES)),
        "reconsume_times": maybe(rnd.randrange(0, 20)),
        "due_ms": maybe(rnd.randrange(0, 2**45)),
        "reason": maybe("x" * rnd.randrange(0, 200)),
    }


_OUT_OF_RANGE = "trace record has a value outside its Avro type's range"
_INTS = [field.name for field in FIELDS if field.kind == "int"]


Row = tuple[tuple[Any, ...], str | None, int, int]


def _expected(values: list[bytes | None]) -> list[Row]:
    """(field values, error, record, index) per event, by the per-record reader; an
    ``int`` field it read as a value beyond 32 bits (it does not check) makes the event
    unreadable; a record without a readable array is one row with the error."""
    rows: list[Row] = []
    nothing = (None,) * len(FIELDS)
    for row, value in enumerate(values):
        try:
            spans = event_spans(value or b"")
        except TraceDecodeError as exc:
            rows.append((nothing, str(exc), row, 0))
            continue
        for index, (start, end) in enumerate(spans):
            try:
                event = decode((value or b"")[start:end])
            except TraceDecodeError as exc:
                rows.append((nothing, str(exc), row, index))
                continue
            if any(not -(2**31) <= (event[name] or 0) < 2**31 for name in _INTS):
                rows.append((nothing, _OUT_OF_RANGE, row, index))
            else:
                rows.append((tuple(event[field.name] for field in FIELDS), None, row, index))
    return rows


def _columnar(values: list[bytes | None]) -> list[Row]:
    decoded = decode_columns(pa.array(values, pa.binary()))
    fields = list(zip(*[column.to_pylist() for column in decoded.columns], strict=True))
    places = [decoded.errors.to_pylist(), decoded.records.tolist(), decoded.index.to_pylist()]
    return list(zip(fields, *places, strict=True))


def _broken(rnd: random.Random, value: bytes, start: int) -> bytes:
    """``value`` truncated, with bytes from ``start`` on overwritten, or with bytes added."""
    data = bytearray(value)
    kind = rnd.randrange(3)
    if kind == 0:  # truncated
        data = data[: rnd.randrange(len(data))]
    elif kind == 1:  # bytes of the body overwritten (bad indexes, lengths, UTF-8)
        for _ in range(rnd.randrange(1, 4)):
            data[rnd.randrange(start, len(data))] = rnd.randrange(256)
    else:  # trailing bytes (an event's: ignored as the record reader does; a batch's: not)
        data += bytes(rnd.randrange(256) for _ in range(4))
    return bytes(data)


def test_reads_every_field_as_the_record_reader_does() -> None:
    rnd = random.Random(5)
    values: list[bytes | None] = [encode(_event(rnd)) for _ in range(500)]
    assert _columnar(values) == _expected(values)


def test_refuses_broken_records_with_the_record_readers_message() -> None:
    rnd = random.Random(9)
    values: list[bytes | None] = [None, b"", b"\xc3\x01", b"not a trace record", HEADER]
    values.append(b"\xc3\x01" + bytes(8) + encode(_event(rnd))[10:])  # another schema
    values += [_broken(rnd, encode(_event(rnd)), len(HEADER)) for _ in range(600)]
    expected = _expected(values)
    assert _columnar(values) == expected
    assert sum(error is not None for _, error, _, _ in expected) > 200  # broken ones tested


def _batch(rnd: random.Random) -> bytes:
    return encode_batch([encode(_event(rnd)) for _ in range(rnd.randrange(1, 40))])


def test_reads_every_event_of_batches_in_order() -> None:
    rnd = random.Random(6)
    values: list[bytes | None] = [_batch(rnd) for _ in range(100)]
    values[50:50] = [encode(_event(rnd)), None, encode_batch([])]  # one event; none; none
    rows = _columnar(values)
    assert rows == _expected(values)
    assert [row[3] for row in rows if row[2] == 0] == list(range(len(event_spans(values[0]))))
    assert len(rows) > 1000 and not any(row[2] == 52 for row in rows)  # empty batch: no row


def test_a_batch_of_several_blocks_is_read_by_the_record_reader() -> None:
    rnd = random.Random(8)
    events = [encode(_event(rnd)) for _ in range(5)]
    sized = b"".join(zigzag_long(len(e)) + e for e in events[2:])
    blocks = b"".join(zigzag_long(len(e)) + e for e in events[:2])
    # a block of 2 items, then a block of 3 given with its size in bytes (count < 0)
    value = BATCH_HEADER + b"\x04" + blocks + zigzag_long(-3) + zigzag_long(len(sized))
    value += sized + b"\x00"
    rows = _columnar([value])
    assert [fields[-1] for fields, *_ in rows] == [decode(e)["reason"] for e in events]
    assert rows == _expected([value])


def test_refuses_broken_batches_with_the_record_readers_message() -> None:
    rnd = random.Random(10)
    values: list[bytes | None] = [BATCH_HEADER, BATCH_HEADER + b"\x02"]
    values += [_broken(rnd, _batch(rnd), len(BATCH_HEADER)) for _ in range(600)]
    expected = _expected(values)
    assert _columnar(values) == expected
    assert sum(error is not None for _, error, _, _ in expected) > 200


def test_an_int_outside_32_bits_is_unreadable_not_a_crash() -> None:
    empty = {"event": "PUBLISH", "timestamp_ms": 0, "client_id": "", "host": "", "namespace": ""}
    value = encode({**empty, "msg_id": "", "partition": 0})
    # body: event, timestamp, three empty strings, three nulls, then partition's
    # union branch (2) and the zig-zag varint of 0; written instead: 2**31 (5 bytes)
    at = len(HEADER) + 8
    assert value[at : at + 2] == bytes([2, 0])
    wide = value[:at] + bytes([2, 0x80, 0x80, 0x80, 0x80, 0x10]) + value[at + 2 :]
    assert decode(wide)["partition"] == 2**31  # the record reader takes it as a long
    assert decode_columns(pa.array([wide], pa.binary())).errors.to_pylist() == [_OUT_OF_RANGE]


def test_only_the_wanted_fields_in_the_order_asked() -> None:
    event = _event(random.Random(3)) | {"group": "G", "reconsume_times": 4}
    columns, errors, *_ = decode_columns(pa.array([encode(event)]), ["reconsume_times", "group"])
    assert [column.to_pylist() for column in columns] == [[4], ["G"]]
    assert [column.type for column in columns] == [pa.int32(), pa.string()]
    assert errors.to_pylist() == [None]


def test_an_empty_batch_gives_empty_typed_columns() -> None:
    columns, errors, *_ = decode_columns(pa.array([], pa.binary()), ["timestamp_ms", "event"])
    assert [(len(c), c.type) for c in columns] == [(0, pa.int64()), (0, pa.string())]
    assert len(errors) == 0


@pytest.mark.parametrize("kind", [pa.binary(), pa.large_binary()])
def test_a_sliced_batch(kind: Any) -> None:
    rnd = random.Random(4)
    values = [encode(_event(rnd)) for _ in range(20)]
    sliced = pa.array(values, kind).slice(5, 10)
    decoded = decode_columns(sliced, ["msg_id"])
    assert decoded.columns[0].to_pylist() == [decode(value)["msg_id"] for value in values[5:15]]
    assert decoded.records.tolist() == list(range(10))


def test_an_unknown_field_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        decode_columns(pa.array([b""], pa.binary()), ["nope"])
