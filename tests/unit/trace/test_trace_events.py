"""Trace event constructors: who, when and the message's own fields."""

from __future__ import annotations

from rmqcompat import properties as props
from rmqcompat.message import MessageExt
from rmqcompat.trace import Emitter, decode, default_client_id, encode
from rmqcompat.trace.schema import EVENT_TYPES, SCHEMA

_MSG = MessageExt(
    "Orders",
    b"x",
    "ID1",
    2,
    41,
    1000,
    1001,
    3,
    {props.ORIGIN_MESSAGE_ID: "ID0", props.TAGS: "paid", props.KEYS: "k1 k2"},
)


def _emitter() -> Emitter:
    return Emitter("h@1@G", "prod", lambda: 5_000, host="h")


def test_consume_carries_message_and_listener_outcome() -> None:
    event = decode(encode(_emitter().consume(_MSG, "G", "EXCEPTION", 12, "prod.rmq.retry.G")))
    assert event == {
        **event,
        "event": "CONSUME",
        "timestamp_ms": 5_000,
        "client_id": "h@1@G",
        "host": "h",
        "namespace": "prod",
        "group": "G",
        "topic": "Orders",
        "physical_topic": "prod.rmq.retry.G",
        "partition": 2,
        "offset": 41,
        "msg_id": "ID1",
        "origin_msg_id": "ID0",
        "tags": "paid",
        "keys": "k1 k2",
        "status": "EXCEPTION",
        "duration_ms": 12,
        "reconsume_times": 3,
        "born_ms": 1000,
    }


def test_send_back_records_level_due_time_and_target() -> None:
    event = decode(encode(_emitter().send_back(_MSG, "G", 6, 65_000, "%SCHEDULE%2m")))
    assert (event["event"], event["delay_level"], event["due_ms"], event["target_topic"]) == (
        "SEND_BACK",
        6,
        65_000,
        "%SCHEDULE%2m",
    )
    assert event["reconsume_times"] == 3


def test_forward_keeps_the_original_topic_and_the_real_one() -> None:
    event = decode(
        encode(
            _emitter().forward(
                "ID1",
                "Orders",
                "%RETRY%G",
                "prod.rmq.delay.10s",
                1,
                7,
                4_990,
                reconsume_times=1,
                delay_level=3,
            )
        )
    )
    assert (event["topic"], event["target_topic"], event["due_ms"]) == ("Orders", "%RETRY%G", 4_990)
    assert event["timestamp_ms"] - event["due_ms"] == 10  # lateness


def test_each_kind_encodes() -> None:
    e = _emitter()
    kinds = [
        e.publish("ID1", "Orders", "prod.Orders", tags="t", born_ms=1),
        e.dead_letter(_MSG, "G", "%DLQ%G", "max reconsume times"),
        e.discard(_MSG, "G", "dead_letter=False"),
        e.filtered(_MSG, "G"),
        e.replay("ID1", "G", "Orders", "%RETRY%G", reason="dlq replay"),
        e.quarantine("prod.Orders", 0, 9, "bad header"),
    ]
    assert [decode(encode(k))["event"] for k in kinds] == [
        "PUBLISH",
        "DEAD_LETTER",
        "DISCARD",
        "FILTER",
        "REPLAY",
        "QUARANTINE",
    ]


def test_every_kind_is_built_complete_and_round_trips() -> None:
    # every schema field present: the encoder reads an event in one step, never field by
    # field; and the fields left null decode as null
    e = _emitter()
    kinds = [
        e.publish("ID1", "Orders", "prod.Orders", tags="t", born_ms=1),
        e.consume(_MSG, "G", "SUCCESS", 3),
        e.send_back(_MSG, "G", 4, 9_000, "%SCHEDULE%"),
        e.forward("ID1", "Orders", "%RETRY%G", "prod.rmq.delay.10s", 1, 7, 9_000,
                  reconsume_times=1, delay_level=4),
        e.dead_letter(_MSG, "G", "%DLQ%G", "max reconsume times"),
        e.discard(_MSG, "G", "dead_letter=False"),
        e.filtered(_MSG, "G"),
        e.replay("ID1", "G", "Orders", "%RETRY%G", reason="dlq replay"),
        e.quarantine("prod.Orders", 0, 9, "bad header"),
    ]  # fmt: skip
    assert sorted(k["event"] for k in kinds) == sorted(EVENT_TYPES)
    fields = {spec["name"] for spec in SCHEMA["fields"]}
    for kind in kinds:
        assert set(kind) == fields, kind["event"]
        assert decode(encode(kind)) == kind


def test_events_do_not_share_their_fields() -> None:
    e = _emitter()
    first = e.dead_letter(_MSG, "G1", "%DLQ%G1", "r")
    e.dead_letter(_MSG, "G2", "%DLQ%G2", "r")
    assert (first["group"], first["target_topic"]) == ("G1", "%DLQ%G1")


def test_default_client_id_names_host_pid_and_client() -> None:
    host, pid, name = default_client_id("OrderGroup").split("@")
    assert host and pid.isdigit() and name == "OrderGroup"
