"""Decoding consumed Kafka records into MessageExt (pure; a plain data holder as the record)."""

from __future__ import annotations

import dataclasses
from typing import Any
from unittest import mock

import pytest
from confluent_kafka import KafkaError, Message
from consumed_records import RECORDS, FakeRecord
from hypothesis import given
from hypothesis import strategies as st

from rmqcompat import properties as props
from rmqcompat import wire
from rmqcompat.errors import InvalidNameError, MalformedHeaderError
from rmqcompat.wire import decode_record, offset_message_id, run_offset


def test_record_with_rmqcompat_headers() -> None:
    headers = props.to_headers(
        {
            props.UNIQ_KEY: "ABC",
            props.BORN_TIMESTAMP: "1700000000000",
            props.RECONSUME_TIME: "2",
            props.TAGS: "TagA",
            "user": "u",
        }
    )
    ext = decode_record(FakeRecord(headers_=headers))
    assert ext.topic == "OrderTopic"
    assert ext.msg_id == "ABC"
    assert (ext.queue_id, ext.queue_offset) == (2, 41)
    assert ext.born_timestamp == 1_700_000_000_000
    assert ext.store_timestamp == 1_700_000_000_500
    assert ext.reconsume_times == 2
    assert ext.tags == "TagA"
    assert ext.get_property("user") == "u"
    assert (ext.body, ext.key) == (b"payload", b"shard")


@pytest.mark.parametrize("headers", [None, []])
def test_record_without_headers_falls_back(headers: list | None) -> None:
    ext = decode_record(FakeRecord(headers_=headers))
    assert ext.msg_id == offset_message_id("ns.OrderTopic", 2, 41) == "ns.OrderTopic@2@41"
    assert ext.born_timestamp == ext.store_timestamp == 1_700_000_000_500
    assert ext.reconsume_times == 0
    assert ext.properties == {}


def test_fallback_ids_differ_per_offset() -> None:
    first = decode_record(FakeRecord(headers_=None, offset_=1)).msg_id
    second = decode_record(FakeRecord(headers_=None, offset_=2)).msg_id
    assert first != second


def test_empty_value_is_an_empty_body() -> None:
    assert decode_record(FakeRecord(value_=None)).body == b""


def test_internal_topics_decode_to_logical_names() -> None:
    assert decode_record(FakeRecord(topic_="ns.rmq.retry.G")).topic == "%RETRY%G"
    assert decode_record(FakeRecord(topic_="rmq.dlq.G")).topic == "%DLQ%G"


@pytest.mark.parametrize(
    "headers",
    [
        [("TAGS", None)],
        [("TAGS", b"\xff")],
        [("TAGS", b"a"), ("TAGS", b"b")],
        [(props.RECONSUME_TIME, b"two")],
        [(props.BORN_TIMESTAMP, b"1.5")],
    ],
)
def test_malformed_headers_raise_typed_error(headers: list[tuple[str, bytes | None]]) -> None:
    with pytest.raises(MalformedHeaderError):
        decode_record(FakeRecord(headers_=headers))


def test_foreign_topic_raises_invalid_name() -> None:
    with pytest.raises(InvalidNameError):
        decode_record(FakeRecord(topic_="a.b.c"))


def _general_decode(record: FakeRecord) -> Any:
    """What the general path alone makes of ``record``: its fields, or the exception."""
    with mock.patch.object(wire, "_plain_decode", lambda *args: None):
        try:
            return dataclasses.asdict(decode_record(record))
        except Exception as exc:  # the exception's type is the outcome compared
            return type(exc)


@given(RECORDS, st.integers(min_value=0, max_value=2**31), st.integers(min_value=0))
def test_the_plain_decode_answers_as_the_general_path_or_leaves_it_to_it(
    record: FakeRecord, partition: int, offset: int
) -> None:
    record.partition_, record.offset_ = partition, offset
    plain = wire.plain_decode(record, "ns.OrderTopic", "OrderTopic", partition, offset)
    if plain is not None:
        assert dataclasses.asdict(plain) == _general_decode(record)


def test_the_plain_decode_takes_the_common_case_and_leaves_the_rest() -> None:
    """Plain digits within range are its own; a sign, a clamp or a malformed header is not."""
    common = [(props.UNIQ_KEY, b"ABC"), (props.BORN_TIMESTAMP, b"5"), (props.FLAG, b"3")]
    decoded = wire.plain_decode(FakeRecord(headers_=common), "ns.OrderTopic", "OrderTopic", 2, 41)
    assert decoded is not None and (decoded.msg_id, decoded.born_timestamp) == ("ABC", 5)
    assert wire.plain_decode(FakeRecord(headers_=None), "p", "l", 2, 41) is not None
    for odd in (
        [(props.RECONSUME_TIME, b"2147483648")],  # clamped by the general path
        [(props.BORN_TIMESTAMP, b"+5")],
        [(props.FLAG, b"-1")],
        [("TAGS", None)],
    ):
        assert wire.plain_decode(FakeRecord(headers_=odd), "p", "l", 2, 41) is None, odd


def test_a_run_goes_on_with_a_record_of_its_partition_and_ends_at_any_other() -> None:
    def record(**fields: Any) -> Message:
        return Message(**{"topic": "t", "partition": 3, "offset": 41, **fields})

    assert run_offset(record(), "t", 3) == 41
    assert run_offset(record(offset=0), "t", 3) == 0  # a first offset is not "no offset"
    eof = KafkaError(KafkaError._PARTITION_EOF)
    for other in (
        record(error=eof),
        record(partition=2),
        record(topic="u"),
        Message(topic="t", partition=3),  # no offset
    ):
        assert run_offset(other, "t", 3) is None
