"""Decoding consumed Kafka records into MessageExt (pure; a plain data holder as the record)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from rmqcompat import properties as props
from rmqcompat.errors import InvalidNameError, MalformedHeaderError
from rmqcompat.wire import decode_record, offset_message_id


@dataclass
class FakeRecord:
    """Implements the KafkaRecord protocol with fixed values."""

    topic_: str | None = "ns.OrderTopic"
    partition_: int | None = 2
    offset_: int | None = 41
    key_: bytes | None = b"shard"
    value_: bytes | None = b"payload"
    headers_: list[tuple[str, bytes | None]] | None = field(default_factory=list)
    timestamp_: tuple[int, int] = (1, 1_700_000_000_500)

    def topic(self) -> str | None:
        return self.topic_

    def partition(self) -> int | None:
        return self.partition_

    def offset(self) -> int | None:
        return self.offset_

    def key(self) -> bytes | None:
        return self.key_

    def value(self) -> bytes | None:
        return self.value_

    def headers(self) -> list[tuple[str, bytes | None]] | None:
        return self.headers_

    def timestamp(self) -> tuple[int, int]:
        return self.timestamp_


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
