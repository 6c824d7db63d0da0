"""Trace records hold a batch of events: Avro as fastavro writes it, packed within bounds,
read back in order, refused with a clear reason when malformed."""

from __future__ import annotations

import io

import pytest
from fastavro import schemaless_reader, schemaless_writer

from rmqcompat.trace import BATCH_HEADER, Emitter, TraceDecodeError, decode_record, encode
from rmqcompat.trace.avro import zigzag_long
from rmqcompat.trace.batch import MAX_BYTES, MAX_EVENTS, encode_batch, event_spans, pack
from rmqcompat.trace.schema import HEADER, PARSED_BATCH_SCHEMA

_EMITTER = Emitter("h@1@P", "ns")


def _events(count: int) -> list[bytes]:
    return [encode(_EMITTER.publish(f"id{n}", "T", "ns.T")) for n in range(count)]


@pytest.mark.parametrize("count", [0, 1, 3, 70])
def test_a_batch_is_what_fastavro_writes_and_reads(count: int) -> None:
    events = _events(count)
    written = io.BytesIO()
    schemaless_writer(written, PARSED_BATCH_SCHEMA, {"events": events})
    value = encode_batch(events)
    assert value == BATCH_HEADER + written.getvalue()
    read = schemaless_reader(io.BytesIO(value[len(BATCH_HEADER) :]), PARSED_BATCH_SCHEMA)
    assert read == {"events": events}


def test_decode_record_reads_every_event_in_order() -> None:
    events = [_EMITTER.publish(f"id{n}", "T", "ns.T") for n in range(5)]
    decoded = decode_record(encode_batch([encode(event) for event in events]))
    assert [event["msg_id"] for event in decoded] == [f"id{n}" for n in range(5)]
    assert decoded[2] == {**decoded[2], **events[2]}


def test_a_record_of_one_event_is_that_event() -> None:
    event = encode(_EMITTER.publish("only", "T", "ns.T"))
    assert event[: len(HEADER)] == HEADER
    assert [e["msg_id"] for e in decode_record(event)] == ["only"]


def test_blocks_with_a_byte_size_are_read() -> None:
    events = _events(3)
    items = b"".join(zigzag_long(len(event)) + event for event in events)
    value = BATCH_HEADER + zigzag_long(-3) + zigzag_long(len(items)) + items + b"\x00"
    assert [e["msg_id"] for e in decode_record(value)] == ["id0", "id1", "id2"]


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (b"plain text", "marker C3 01 missing"),
        (b"\xc3\x01" + bytes(8) + b"\x00", r"another trace schema \(fingerprint 0{16}\)"),
        (encode_batch(_events(2))[:-5], "past the record's end"),
        (encode_batch(_events(2))[:-1], "ends inside a number"),
        (encode_batch(_events(2)) + b"\x00", "1 bytes after its end"),
        (BATCH_HEADER + b"\xff" * 11, "longer than 64 bits"),
        (BATCH_HEADER + b"\x02\x03", "past the record's end"),  # an item of length -2
    ],
)
def test_a_malformed_record_is_refused_with_its_reason(value: bytes, reason: str) -> None:
    with pytest.raises(TraceDecodeError, match=reason):
        event_spans(value)


def test_a_broken_event_in_a_batch_is_refused() -> None:
    events = _events(2)
    with pytest.raises(TraceDecodeError, match="not Avro single-object encoded"):
        decode_record(encode_batch([events[0], b"junk"]))


def test_pack_keeps_order_and_bounds_each_record() -> None:
    events = _events(MAX_EVENTS * 2 + 7)
    records = list(pack([events]))
    assert [count for _, count in records] == [MAX_EVENTS, MAX_EVENTS, 7]
    unpacked = [event for value, _ in records for event in _items(value)]
    assert unpacked == events


def test_pack_closes_a_record_before_it_passes_max_bytes() -> None:
    small, big = b"s" * (MAX_BYTES // 4), b"x" * (MAX_BYTES + 1)
    fill = [small] * 4  # MAX_BYTES together
    # a write's events are one part: records run across parts
    records = list(pack([fill[:3], [fill[3], small], [], [big, small]]))
    counts = [count for _, count in records]
    # the fill, then the small one that no longer fits, then the big one alone, then the last
    assert counts == [4, 1, 1, 1]
    assert [_items(value) for value, _ in records] == [fill, [small], [big], [small]]


def _items(value: bytes) -> list[bytes]:
    return [value[start:end] for start, end in event_spans(value)]
