"""The send hot path's shortcuts give exactly what the general code gives."""

from __future__ import annotations

from concurrent.futures import InvalidStateError
from typing import Any

import pytest

from rmqcompat import properties as props
from rmqcompat.errors import InvalidMessageError
from rmqcompat.message import Message
from rmqcompat.producer.pending import PendingSend
from rmqcompat.producer.send_future import SendFuture
from rmqcompat.trace.codec import decode, encode
from rmqcompat.trace.events import Emitter
from rmqcompat.trace.schema import SCHEMA

FIELDS = [field["name"] for field in SCHEMA["fields"]]


def test_publish_event_sets_every_schema_field_and_round_trips() -> None:
    event = Emitter("h@1@PG", "ns", clock=lambda: 42).publish(
        "ID1", "Orders", "ns.Orders", tags="t", keys="a b", born_ms=7, delay_level=3, due_ms=9
    )
    assert list(event) == FIELDS  # complete: the encoder reads it in one step
    assert decode(encode(event)) == event
    assert {k: v for k, v in event.items() if v is not None} == {
        "event": "PUBLISH",
        "timestamp_ms": 42,
        "client_id": "h@1@PG",
        "host": event["host"],
        "namespace": "ns",
        "topic": "Orders",
        "physical_topic": "ns.Orders",
        "msg_id": "ID1",
        "tags": "t",
        "keys": "a b",
        "born_ms": 7,
        "delay_level": 3,
        "due_ms": 9,
    }


@pytest.mark.parametrize(
    "fields",
    [
        {"body": 123},
        {"body": bytearray(b"x")},
        {"tags": 5},
        {"flag": True},
        {"flag": 1.5},
        {"delay_time_level": "1"},
        {"delay_time_level": False},
        {"deliver_time_ms": "soon"},
        {"properties": {props.TAGS: "x"}},
        {"properties": {"u": 1}},
        {"properties": [("u", "v")]},
        {"keys": b"k"},
    ],
    ids=str,
)
def test_a_known_topic_does_not_skip_any_field_check(fields: dict[str, Any]) -> None:
    Message("HotT", b"x")  # the topic is now known (validated once)
    with pytest.raises(InvalidMessageError):
        Message("HotT", **{"body": b"x", **fields})


@pytest.mark.parametrize("topic", [["HotT"], 5, None])
def test_a_topic_of_the_wrong_type_is_refused_as_before(topic: Any) -> None:
    with pytest.raises(InvalidMessageError):
        Message(topic, b"x")


def test_messages_off_the_shortcut_are_normalised_as_before() -> None:
    Message("HotT", b"x")
    assert Message("HotT", "text").body == b"text"
    assert Message("HotT", b"x", keys=["a", "b"]).keys == "a b"
    assert Message("HotT", b"x", tags="t", flag=2).tags == "t"


def _pending(headers: Any) -> PendingSend:
    return PendingSend("ns.T", b"body", None, headers, "ID1", "T", Message("T", b"body"), 3)


def test_a_pending_send_with_plain_headers_spools_them_as_a_list_in_order() -> None:
    headers = {props.TAGS: b"t", props.UNIQ_KEY: b"ID1", props.BORN_TIMESTAMP: b"5"}
    record = _pending(headers).record()
    assert record.headers == [
        (props.TAGS, b"t"),
        (props.UNIQ_KEY, b"ID1"),
        (props.BORN_TIMESTAMP, b"5"),
    ]
    assert (record.topic, record.value, record.key, record.partition) == (
        "ns.T",
        b"body",
        None,
        None,
    )


def test_a_stored_send_reports_what_set_delivered_would() -> None:
    seen: list[object] = []
    stored = PendingSend(
        "ns.T", b"b", None, {}, "ID1", "T", Message("T", b"b"), 3, on_outcome=seen.append
    )
    stored.attempts = 2
    stored.set_stored(3, 41)
    delivered = SendFuture()
    delivered.set_delivered(("ID1", "T", "ns.T", 3, 41, 2))
    assert stored.result() == delivered.result()
    assert seen == [stored.result()]  # the outcome callback got the very same result
    with pytest.raises(InvalidStateError):
        stored.set_stored(0, 1)
    assert stored.result().queue_offset == 41


def test_a_released_send_keeps_its_outcome_but_not_its_record() -> None:
    pending = _pending({props.UNIQ_KEY: b"ID1"})
    pending.set_stored(2, 41)
    pending.release()
    assert (pending.value, pending.headers, pending.message) == (None, None, None)
    assert pending.result().queue_offset == 41  # the future it is still works
    with pytest.raises(ValueError, match="released"):
        pending.record()
