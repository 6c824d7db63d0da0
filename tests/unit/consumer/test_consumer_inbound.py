"""Decoding on the consumer's hot path: fast header decoding and per-topic decoders."""

from __future__ import annotations

import dataclasses

import pytest

from rmqcompat import properties as props
from rmqcompat.consumer.inbound import (
    CHECKED_KEPT,
    InboundTopic,
    reset_checked,
    reset_retry_topic,
)
from rmqcompat.consumer.tag_filter import TagFilter
from rmqcompat.errors import InvalidNameError, MalformedHeaderError
from rmqcompat.message import MessageExt
from rmqcompat.wire import TopicDecoder, decode_properties


class Record:
    def __init__(self, headers: list | None, value: bytes | None = b"body") -> None:
        self._headers = headers

        self._value = value

    def topic(self) -> str:
        return "ns.T"

    def partition(self) -> int:
        return 3

    def offset(self) -> int:
        return 77

    def key(self) -> bytes:
        return b"k"

    def value(self) -> bytes | None:
        return self._value

    def headers(self) -> list | None:
        return self._headers

    def timestamp(self) -> tuple[int, int]:
        return (1, 5000)


@pytest.mark.parametrize(
    "headers",
    [
        None,
        [],
        [("A", b"1"), ("B", "é".encode())],
        [("A", None)],
        [("A", b"\xff")],
        [("A", b"1"), ("A", b"2")],
    ],
)
def test_decode_properties_agrees_with_the_codec(headers):
    try:
        expected = props.from_headers(headers)
    except MalformedHeaderError as exc:
        with pytest.raises(MalformedHeaderError, match=str(exc)):
            decode_properties(headers)
    else:
        assert decode_properties(headers) == expected


def test_every_field_lands_where_the_keyword_constructor_puts_it():
    headers = props.to_headers(
        {props.UNIQ_KEY: "ID", props.BORN_TIMESTAMP: "4000", props.RECONSUME_TIME: "9"}
    )
    msg = TopicDecoder("ns.T", "T").decode(Record(headers), 3, 77)
    expected = MessageExt(
        topic="T",
        body=b"body",
        msg_id="ID",
        queue_id=3,
        queue_offset=77,
        born_timestamp=4000,
        store_timestamp=5000,
        reconsume_times=9,
        properties=props.from_headers(headers),
        key=b"k",
    )
    assert dataclasses.asdict(msg) == dataclasses.asdict(expected)


def test_retry_topic_messages_get_their_original_topic_back():
    headers = props.to_headers({props.RETRY_TOPIC: "Orders"})
    inbound = InboundTopic.of("ns.rmq.retry.G", "%RETRY%G", TagFilter.parse("*"))
    msg = inbound.decoder.decode(Record(headers), 0, 1)
    assert (inbound.own_retry, inbound.tags) == ("%RETRY%G", None)
    assert msg.topic == "%RETRY%G"  # the reset is the consumer's step, not the decoder's


def test_tag_filter_is_kept_only_when_it_filters():
    inbound = InboundTopic.of("ns.T", "%RETRY%G", TagFilter.parse("A || B"))
    assert inbound.own_retry is None and inbound.tags is not None
    assert inbound.tags.matches("A") and not inbound.tags.matches(None)


def test_foreign_topic_name_is_refused():
    with pytest.raises(InvalidNameError):
        InboundTopic.of("a.b.c", "%RETRY%G", None)


def _retry_message(original: str | None) -> MessageExt:
    properties = {} if original is None else {props.RETRY_TOPIC: original}
    return MessageExt("%RETRY%G", b"", "ID", 0, 1, 1, 1, 1, properties)


def test_a_reset_remembers_the_legal_names_it_checked_and_only_those():
    checked: dict[str, str] = {}
    reset_retry_topic(_retry_message("Orders"), "%RETRY%G", checked)
    with pytest.raises(MalformedHeaderError, match="RETRY_TOPIC"):
        reset_retry_topic(_retry_message("bad name!"), "%RETRY%G", checked)
    reset_retry_topic(_retry_message(None), "%RETRY%G", checked)
    assert checked == {"Orders": "Orders"}


def test_the_names_remembered_are_bounded():
    checked = {f"T{i}": f"T{i}" for i in range(CHECKED_KEPT)}
    reset_retry_topic(_retry_message("Orders"), "%RETRY%G", checked)
    assert checked == {"Orders": "Orders"}  # full: all forgotten, then the new one kept


def test_a_reset_by_checked_names_leaves_a_name_not_checked_to_the_caller():
    checked = {"Orders": "Orders"}
    known, unknown, absent = _retry_message("Orders"), _retry_message("Other"), _retry_message("")
    assert reset_checked(known, checked) and known.topic == "Orders"
    assert not reset_checked(unknown, checked) and unknown.topic == "%RETRY%G"
    assert reset_checked(absent, checked) and absent.topic == "%RETRY%G"


def test_an_inbound_topic_is_what_it_reads_not_what_its_intake_learnt():
    learnt = InboundTopic.of("ns.rmq.retry.G", "%RETRY%G", None)
    assert learnt.checked is not None
    learnt.checked["Orders"] = "Orders"
    fresh = InboundTopic.of("ns.rmq.retry.G", "%RETRY%G", None)
    assert learnt == fresh and hash(learnt) == hash(fresh)
