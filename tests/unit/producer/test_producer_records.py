"""Message -> Kafka record conversion: headers, keys, parking of delayed and timer messages."""

from __future__ import annotations

from typing import Any

import pytest
from compiled_core import compiled_core

from rmqcompat import properties as props
from rmqcompat.message import Message
from rmqcompat.producer.records import build_record, encode_key, plain_headers
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.naming import to_kafka_topic

NOW = 1_700_000_000_000
LEVELS = DelayLevels.parse("1s 5s 10s 30s 1m")


def build(msg: Message, namespace: str = "ns", **kwargs: object):
    return build_record(
        msg,
        physical_topic=to_kafka_topic(msg.topic, namespace),
        namespace=namespace,
        levels=LEVELS,
        msg_id="ID1",
        now_ms=NOW,
        **kwargs,
    )


def headers(prepared) -> dict[str, str]:
    return props.from_headers(prepared.record.headers)


def test_plain_message_carries_body_id_born_time_and_all_properties():
    msg = Message("T", b"body", tags="TagA", keys=["k1", "k2"], flag=7, properties={"u": "v"})
    prepared = build(msg)
    assert prepared.record.topic == "ns.T"
    assert prepared.record.value == b"body"
    assert prepared.record.key is None
    assert prepared.level is None
    assert prepared.msg_id == "ID1"
    assert headers(prepared) == {
        "u": "v",
        props.TAGS: "TagA",
        props.KEYS: "k1 k2",
        props.FLAG: "7",
        props.UNIQ_KEY: "ID1",
        props.BORN_TIMESTAMP: str(NOW),
    }


@pytest.mark.parametrize(
    ("sharding_key", "expected"),
    [("order-1", b"order-1"), (b"\x00\xff", b"\x00\xff"), (None, None)],
)
def test_sharding_key_becomes_the_record_key(sharding_key, expected):
    assert build(Message("T", b"x"), sharding_key=sharding_key).record.key == expected


def test_sharding_key_of_another_type_is_refused():
    with pytest.raises(TypeError, match="sharding_key"):
        encode_key(42)  # type: ignore[arg-type]


def test_delay_level_parks_on_that_level_topic_with_due_time_and_real_topic():
    prepared = build(Message("T", b"x", tags="A", delay_time_level=3), sharding_key="k")
    assert prepared.level == 3
    assert prepared.record.topic == to_kafka_topic("%SCHEDULE%10s", "ns")
    assert prepared.record.key == b"k"
    got = headers(prepared)
    assert got[props.REAL_TOPIC] == "T"
    assert got[props.DELAY] == "3"
    assert got[props.DUE_TIME] == str(NOW + 10_000)
    assert got[props.UNIQ_KEY] == "ID1"
    assert got[props.TAGS] == "A"


def test_delay_level_above_the_table_is_capped_at_the_highest_level():
    prepared = build(Message("T", b"x", delay_time_level=99))
    assert prepared.level == LEVELS.max_level
    assert headers(prepared)[props.DUE_TIME] == str(NOW + 60_000)


def test_timer_message_hops_through_the_largest_level_that_fits():
    deliver = NOW + 45_000
    prepared = build(Message("T", b"x", deliver_time_ms=deliver))
    assert prepared.level == 4  # 30s fits in 45s, 1m does not
    got = headers(prepared)
    assert got[props.TIMER_DELIVER_MS] == str(deliver)
    assert got[props.DUE_TIME] == str(NOW + 30_000)
    assert got[props.REAL_TOPIC] == "T"


def test_timer_message_shorter_than_every_level_parks_on_level_one_until_its_time():
    prepared = build(Message("T", b"x", deliver_time_ms=NOW + 300))
    assert prepared.level == 1
    assert headers(prepared)[props.DUE_TIME] == str(NOW + 300)


def test_timer_message_already_due_is_sent_at_once_without_timer_property():
    prepared = build(Message("T", b"x", deliver_time_ms=NOW - 1))
    assert prepared.level is None
    assert prepared.record.topic == "ns.T"
    assert props.TIMER_DELIVER_MS not in headers(prepared)


def test_delay_level_zero_or_negative_sends_at_once():
    for level in (0, -1):
        prepared = build(Message("T", b"x", delay_time_level=level))
        assert prepared.level is None
        assert props.DELAY not in headers(prepared)


@pytest.fixture(params=["pure", "compiled"])
def headers_of(request: pytest.FixtureRequest) -> Any:
    """:func:`plain_headers`, and the core's counterpart."""
    return plain_headers if request.param == "pure" else compiled_core().plain_headers


@pytest.mark.parametrize(
    "msg",
    [
        Message("T", b"b"),
        Message("T", b"b", tags="TagA"),
        Message("T", b"b", tags="", keys="", flag=0),
        Message("T", b"b", tags="TagA", keys=["k1", "k2"], flag=7),
        Message("T", "text", keys="only", flag=-3),
        Message("T", b"b", deliver_time_ms=NOW - 1),
    ],
)
def test_plain_headers_equal_build_record_headers(msg: Message, headers_of: Any) -> None:
    fast = headers_of(msg, "ID1", NOW)
    if msg.deliver_time_ms is not None:
        assert fast is None  # timers keep the general path
        return
    assert fast is not None
    # the same headers in the same order (the wire order confluent-kafka writes them in)
    assert list(fast.items()) == build(msg).record.headers


@pytest.mark.parametrize(
    "msg",
    [
        Message("T", b"b", properties={"u": "v"}),
        Message("T", b"b", delay_time_level=2),
        Message("T", b"b", deliver_time_ms=NOW + 5000),
    ],
)
def test_plain_headers_leave_properties_delays_and_timers_to_build_record(
    msg: Message, headers_of: Any
) -> None:
    assert headers_of(msg, "ID1", NOW) is None
