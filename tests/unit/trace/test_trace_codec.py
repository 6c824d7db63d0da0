"""Trace records: Avro single-object encoding with the schema's fingerprint."""

from __future__ import annotations

import json

import pytest
from fastavro.schema import fingerprint, parse_schema, to_parsing_canonical_form

from rmqcompat.trace import FINGERPRINT, HEADER, SCHEMA_JSON, TraceDecodeError, decode, encode
from rmqcompat.trace.schema import EVENT_TYPES

_MINIMAL = {
    "event": "PUBLISH",
    "timestamp_ms": 1_700_000_000_000,
    "client_id": "host@1@P",
    "host": "host",
    "namespace": "prod",
    "msg_id": "AB12",
}


def test_header_is_marker_and_little_endian_crc64_of_the_canonical_form() -> None:
    canonical = to_parsing_canonical_form(parse_schema(json.loads(SCHEMA_JSON)))
    value = int(fingerprint(canonical, "CRC-64-AVRO"), 16).to_bytes(8, "big")
    assert HEADER == b"\xc3\x01" + FINGERPRINT
    assert FINGERPRINT == value  # fastavro's digits are already the little-endian bytes


def test_fingerprint_matches_avro_spec_example() -> None:
    # the single-object header of schema "int" is C3 01 8F 5C 39 3F 1A D5 75 72
    assert fingerprint('"int"', "CRC-64-AVRO") == "8f5c393f1ad57572"


def test_round_trip_fills_absent_fields_with_null() -> None:
    record = decode(encode(_MINIMAL))
    assert {k: record[k] for k in _MINIMAL} == _MINIMAL
    assert record["group"] is None and record["status"] is None


def test_every_field_round_trips() -> None:
    full = dict(
        _MINIMAL,
        event="CONSUME",
        group="G",
        topic="%RETRY%G",
        physical_topic="prod.rmq.retry.G",
        partition=3,
        offset=2**40,
        origin_msg_id="O",
        tags="t",
        keys="k1 k2",
        status="TIME_OUT",
        duration_ms=15,
        reconsume_times=2,
        delay_level=5,
        due_ms=1_700_000_060_000,
        target_topic="%DLQ%G",
        born_ms=1_699_999_999_000,
        reason="why",
    )
    assert decode(encode(full)) == full


def test_event_types_are_the_issue_list() -> None:
    assert set(EVENT_TYPES) >= {
        "PUBLISH",
        "CONSUME",
        "SEND_BACK",
        "FORWARD",
        "DEAD_LETTER",
        "DISCARD",
        "REPLAY",
        "QUARANTINE",
    }


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"", "marker"),
        (b"{json}", "marker"),
        (b"\xc3\x01" + b"\x00" * 8 + b"\x00", "another trace schema"),
        (HEADER + b"\x02", "not a valid event"),
    ],
)
def test_foreign_records_raise_one_typed_error(data: bytes, why: str) -> None:
    with pytest.raises(TraceDecodeError, match=why):
        decode(data)


def test_wrong_field_type_is_refused_at_encoding() -> None:
    with pytest.raises((ValueError, TypeError)):
        encode(dict(_MINIMAL, partition="three"))
