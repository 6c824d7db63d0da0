"""The send hot path's shortcuts give exactly what the general code gives."""

from __future__ import annotations

import gc
import weakref
from concurrent.futures import InvalidStateError
from typing import Any
from unittest import mock

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


def _pending(kind: type[PendingSend], headers: Any, message: object = None) -> PendingSend:
    message = Message("T", b"body") if message is None else message
    return kind("ns.T", b"body", None, headers, "ID1", "T", message, 3)  # type: ignore[arg-type]


def test_a_pending_send_with_plain_headers_spools_them_as_a_list_in_order(
    pending_send: type[PendingSend],
) -> None:
    headers = {props.TAGS: b"t", props.UNIQ_KEY: b"ID1", props.BORN_TIMESTAMP: b"5"}
    record = _pending(pending_send, headers).record()
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


def test_a_stored_send_reports_what_set_delivered_would(pending_send: type[PendingSend]) -> None:
    seen: list[object] = []
    stored = pending_send(
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


def test_a_released_send_keeps_its_outcome_but_not_its_record(
    pending_send: type[PendingSend],
) -> None:
    pending = _pending(pending_send, {props.UNIQ_KEY: b"ID1"})
    pending.set_stored(2, 41)
    pending.release()
    assert (pending.value, pending.headers, pending.message) == (None, None, None)
    assert pending.result().queue_offset == 41  # the future it is still works
    with pytest.raises(ValueError, match="released"):
        pending.record()


def test_the_collector_walks_a_compiled_send_only_once_it_failed(
    compiled_pending_send: type[PendingSend],
) -> None:
    """The sends in flight and the futures a caller keeps are not walked at every
    collection; a failed send, which may be part of a cycle (its error's traceback), is."""
    delivered, failed = (_pending(compiled_pending_send, {}) for _ in range(2))
    assert not gc.is_tracked(delivered) and not gc.is_tracked(failed)
    delivered.set_stored(0, 1)
    delivered.release()
    assert not gc.is_tracked(delivered) and delivered.result().queue_offset == 1
    failed.set_exception(ValueError("refused"))
    assert gc.is_tracked(failed)


class RecordingClient:
    """Records the arguments ``produce`` was given (positional only: a send gives no
    keyword); raises ``refusal`` when one is set."""

    def __init__(self, refusal: BaseException | None = None) -> None:
        self.produced: list[tuple[Any, ...]] = []
        self.refusal = refusal

    def produce(self, *args: Any) -> None:
        self.produced.append(args)
        if self.refusal is not None:
            raise self.refusal


def test_an_attempt_is_counted_noted_and_produced_with_the_send_as_its_callback(
    pending_send: type[PendingSend],
) -> None:
    headers = {props.UNIQ_KEY: b"ID1"}
    pending = _pending(pending_send, headers)
    client, report = RecordingClient(), mock.Mock()
    pending.start_attempt(client, report)
    assert (pending.attempts, pending.producer, pending.on_report) == (1, client, report)
    assert client.produced == [("ns.T", b"body", None, -1, pending, None, 0, headers)]
    pending.partition = 2
    full = RecordingClient(BufferError("queue full"))
    with pytest.raises(BufferError):
        pending.start_attempt(full, report)
    assert (pending.attempts, pending.producer) == (2, full)
    assert full.produced[0][:4] == ("ns.T", b"body", None, 2)
    roomy = RecordingClient()
    pending.produce_on(roomy)  # the same attempt, once the queue has room: not counted
    assert (pending.attempts, pending.producer) == (2, full)
    assert roomy.produced == [("ns.T", b"body", None, 2, pending, None, 0, headers)]
    pending(None, None)  # its delivery report goes to the handler noted
    report.assert_called_once_with(pending, None, None)


def test_a_compiled_send_hides_its_message_from_the_collector_only_while_it_holds_it(
    compiled_pending_send: type[PendingSend],
) -> None:
    """A burst's messages in flight are not walked at every full collection; the collector
    sees each again once its send has an outcome, lets go of it, or is gone."""
    ends: list[Any] = [
        lambda send: send.set_stored(0, 1),
        lambda send: send.set_exception(ValueError("refused")),
        lambda send: send.release(),
        lambda send: setattr(send, "message", None),
    ]
    for end in ends:
        msg = Message("T", b"body")
        send = _pending(compiled_pending_send, {}, msg)
        assert not gc.is_tracked(msg)
        end(send)
        assert gc.is_tracked(msg)
    msg = Message("T", b"body")
    send = _pending(compiled_pending_send, {}, msg)
    del send  # never finished
    assert gc.is_tracked(msg)


def test_a_compiled_send_hides_neither_a_message_subclass_nor_another_sends_message(
    compiled_pending_send: type[PendingSend],
) -> None:
    class Tagged(Message):
        pass

    tagged = Tagged("T", b"body")
    _keep = _pending(compiled_pending_send, {}, tagged)
    assert gc.is_tracked(tagged)
    msg = Message("T", b"body")
    first = _pending(compiled_pending_send, {}, msg)
    second = _pending(compiled_pending_send, {}, msg)  # the same message sent again
    first.set_stored(0, 1)
    assert gc.is_tracked(msg)  # shown again by the send that hid it; the other never hid it
    second.set_stored(0, 2)
    assert gc.is_tracked(msg)


def test_a_cycle_through_a_hidden_message_is_collected_once_its_send_ends(
    compiled_pending_send: type[PendingSend],
) -> None:
    msg = Message("T", b"body")
    msg.properties = {"self": msg}  # type: ignore[dict-item]  # a cycle through the message
    send = _pending(compiled_pending_send, {}, msg)
    watch = weakref.ref(msg)
    del msg
    gc.collect()
    assert watch() is not None  # held by its send
    send.set_stored(0, 1)
    send.release()
    gc.collect()
    assert watch() is None


class _Payload:
    """A message stand-in that can point back at its send and be watched by a weakref."""

    send: object = None


def test_a_cycle_through_a_compiled_send_is_collected(
    compiled_pending_send: type[PendingSend],
) -> None:
    payload = _Payload()
    pending = _pending(compiled_pending_send, {}, payload)
    payload.send = pending  # message -> send -> message
    try:
        pending.result(timeout=0)
    except TimeoutError as exc:
        pending.set_exception(exc)  # send -> error -> traceback -> this frame -> send
    watch = weakref.ref(payload)
    del payload, pending
    gc.collect()
    assert watch() is None


def test_a_send_stored_at_an_offset_librdkafka_does_not_know_still_completes(
    pending_send: type[PendingSend],
) -> None:
    """With ``acks=0`` a delivery report has no offset: confluent-kafka gives None."""
    pending = _pending(pending_send, {})
    pending.set_stored(2, None)  # type: ignore[arg-type]
    assert pending.done() and pending.result().queue_offset is None
