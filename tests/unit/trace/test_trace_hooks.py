"""Trace events built from data-path values: send-back destinations, forwarded records."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from unit_fakes import ListSink

from rmqcompat import properties as props
from rmqcompat.consumer.sendback_record import SendBackTarget, send_back_record
from rmqcompat.message import Message, MessageExt
from rmqcompat.parking import ParkedAt
from rmqcompat.retry import Destination, DestinationKind
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.trace import Emitter, Tracer, bulk, decode, hooks
from rmqcompat.wire import OutgoingRecord


@dataclass
class _Record:
    """The part of a consumed record the hooks read."""

    headers_: list[tuple[str, bytes | None]]
    topic_: str = "ns.rmq.delay.10s"

    def topic(self) -> str:
        return self.topic_

    def partition(self) -> int:
        return 2

    def offset(self) -> int:
        return 40

    def key(self) -> bytes | None:
        return None

    def value(self) -> bytes:
        return b""

    def headers(self) -> list[tuple[str, bytes | None]]:
        return self.headers_

    def timestamp(self) -> tuple[int, int]:
        return (1, 0)


def _tracer() -> tuple[Tracer, ListSink]:
    sink = ListSink()
    return Tracer(sink, Emitter("c", "ns", lambda: 1_000)), sink


_MSG = MessageExt("Orders", b"", "ID", 0, 5, 1, 1, 2, {})
_LEVELS = DelayLevels.parse()


def _parked_send_back(level: int, reconsume_times: int) -> tuple[OutgoingRecord, ParkedAt]:
    """The record that sends ``_MSG`` back to ``level`` at 1,000 ms, and where it parks."""
    target = SendBackTarget.of("%RETRY%G", level, _LEVELS, "ns")
    return send_back_record(_MSG, reconsume_times, target, 1_000)


def _settled_back(tracer: Tracer, reconsume_times: int, level: int, parked_at: ParkedAt) -> None:
    """As the consumer traces a stored send-back of ``_MSG``: noted when produced, then
    the run, at the time it was stored."""
    stored = (tracer.events.clock(), _MSG, reconsume_times, level, *parked_at)
    hooks.settled_back_run(tracer, "G", [stored])


def test_send_back_to_a_level_records_the_topic_and_due_time_it_was_written_with() -> None:
    tracer, sink = _tracer()
    _record, parked_at = _parked_send_back(5, 2)
    _settled_back(tracer, 2, 5, parked_at)
    (event,) = sink.events
    assert (event["event"], event["delay_level"], event["target_topic"]) == (
        "SEND_BACK",
        5,
        "%SCHEDULE%1m",
    )
    assert event["due_ms"] == 61_000 and event["reconsume_times"] == 2


def test_send_back_traced_late_still_records_the_due_time_written_not_one_from_its_ack() -> None:
    tracer, sink = _tracer()
    record, parked_at = _parked_send_back(3, 0)
    written = {name: value for name, value in record.headers}[props.DUE_TIME]
    _settled_back(tracer, 0, 3, parked_at)
    assert str(sink.events[0]["due_ms"]).encode() == written == b"11000"


def test_send_back_to_the_dlq_is_a_dead_letter() -> None:
    tracer, sink = _tracer()
    dlq = Destination(DestinationKind.DLQ, "%DLQ%G")
    hooks.dead_lettered(tracer, _MSG, 2, "G", dlq)
    assert [(e["event"], e["target_topic"]) for e in sink.events] == [("DEAD_LETTER", "%DLQ%G")]


def test_forwarded_reads_ids_and_counts_from_the_parked_properties() -> None:
    tracer, sink = _tracer()
    properties = {
        props.UNIQ_KEY: "ID",
        props.REAL_TOPIC: "%RETRY%G",
        props.RETRY_TOPIC: "Orders",
        props.RECONSUME_TIME: "3",
        props.ORIGIN_MESSAGE_ID: "ID0",
        props.DELAY: "6",
    }
    hooks.forwarded(tracer, [(1, _Record(props.to_headers(properties)), properties, 990)])
    (event,) = sink.events
    assert (event["msg_id"], event["topic"], event["target_topic"]) == ("ID", "Orders", "%RETRY%G")
    assert (event["reconsume_times"], event["delay_level"], event["due_ms"]) == (3, 6, 990)
    assert (event["physical_topic"], event["partition"], event["offset"]) == (
        "ns.rmq.delay.10s",
        2,
        40,
    )


def test_quarantined_record_with_unreadable_headers_still_traced() -> None:
    tracer, sink = _tracer()
    hooks.quarantined(tracer, _Record([(props.UNIQ_KEY, b"\xff")], "ns.Orders"), "not UTF-8")
    (event,) = sink.events
    assert (event["event"], event["msg_id"], event["reason"]) == ("QUARANTINE", "", "not UTF-8")


def test_published_keeps_schedule_and_the_due_time_the_producer_wrote() -> None:
    tracer, sink = _tracer()
    message = Message("Orders", b"x", tags="t", keys=["a", "b"], delay_time_level=3)
    written = [(props.DELAY, b"3"), (props.DUE_TIME, b"10777")]
    hooks.published(tracer, [(1, message, "ID", "ns.rmq.delay.10s", 5, written)])
    (event,) = sink.events
    assert (event["topic"], event["keys"], event["delay_level"]) == ("Orders", "a b", 3)
    assert event["due_ms"] == 10_777


def test_published_sends_are_handed_over_in_one_append_in_order() -> None:
    tracer, sink = _tracer()
    sends = [(10 + n, Message("Orders", b"x"), f"ID{n}", "ns.Orders", None, ()) for n in range(3)]
    hooks.published(tracer, sends)
    hooks.published(tracer, [])  # nothing acknowledged: nothing appended
    assert sink.appends == 1
    assert [(e["msg_id"], e["timestamp_ms"]) for e in sink.events] == [
        ("ID0", 10),
        ("ID1", 11),
        ("ID2", 12),
    ]


def test_published_timer_message_is_due_at_its_delivery_time() -> None:
    tracer, sink = _tracer()
    message = Message("Orders", b"x", deliver_time_ms=99_000)
    hooks.published(tracer, [(1, message, "ID", "ns.rmq.delay.1m", None, [(props.DUE_TIME, b"5")])])
    assert sink.events[0]["due_ms"] == 99_000


def test_calls_that_succeeded_are_traced_in_one_append_with_their_own_durations() -> None:
    tracer, sink = _tracer()
    first = [MessageExt("Orders", b"", f"A{i}", 0, i, 1, 1) for i in range(2)]
    second = [MessageExt("Orders", b"", "B0", 1, 9, 1, 1, 4)]
    hooks.consumed_ok(tracer, "G", [(first, 3), (second, 8)])
    assert sink.appends == 1
    seen = [(e["msg_id"], e["status"], e["duration_ms"], e["reconsume_times"]) for e in sink.events]
    assert seen == [("A0", "SUCCESS", 3, 0), ("A1", "SUCCESS", 3, 0), ("B0", "SUCCESS", 8, 4)]
    assert {(e["event"], e["group"], e["timestamp_ms"]) for e in sink.events} == {
        ("CONSUME", "G", 1_000)
    }


def test_calls_that_failed_are_traced_in_one_append_with_what_each_call_would_give() -> None:
    tracer, sink = _tracer()
    first = [MessageExt("Orders", b"", f"A{i}", 0, i, 1, 1, 2) for i in range(2)]
    second = [MessageExt("Orders", b"", "B0", 1, 9, 1, 1, 4)]
    calls = [
        hooks.failed_call(first, {1}, 3),
        hooks.failed_call(second, {0}, 8, raised=True),
    ]
    second[0].reconsume_times = 5  # a failed send-back's local +1: the call's count stays
    hooks.consumed_calls(tracer, "G", calls)
    assert sink.appends == 1
    seen = [(e["msg_id"], e["status"], e["duration_ms"], e["reconsume_times"]) for e in sink.events]
    assert seen == [
        ("A0", "SUCCESS", 3, 2),
        ("A1", "RECONSUME_LATER", 3, 2),
        ("B0", "EXCEPTION", 8, 4),
    ]
    one_by_one, sink_each = _tracer()
    hooks.consumed(one_by_one, "G", first, {1}, 3)
    second[0].reconsume_times = 4
    hooks.consumed(one_by_one, "G", second, {0}, 8, raised=True)
    assert sink_each.events == sink.events


def test_calls_of_one_duration_in_a_row_give_the_events_of_each_call_in_order() -> None:
    msgs = [MessageExt("Orders", b"", f"M{i}", i % 2, i, 1, 1, i) for i in range(6)]
    calls = [([msgs[0]], 0), ([msgs[1]], 0), (msgs[2:4], 5), ([msgs[4]], 0), ([msgs[5]], 0)]
    who = bulk.identity("c", "host", "ns")
    each = [
        event
        for call, duration_ms in calls
        for event in bulk.consumed_calls(
            who, 7, "G", [(call, (), duration_ms, "RECONSUME_LATER", None)]
        )
    ]
    assert list(bulk.consumed_ok(who, 7, "G", calls)) == each
    assert [decode(e)["duration_ms"] for e in each] == [0, 0, 5, 5, 0, 0]


def test_consumed_marks_failed_indexes_and_timeouts() -> None:
    tracer, sink = _tracer()
    msgs = [MessageExt("Orders", b"", f"ID{i}", 0, i, 1, 1) for i in range(3)]
    hooks.consumed(tracer, "G", msgs, {1}, 7)
    hooks.consumed(tracer, "G", msgs[:1], {0}, 900_000, timed_out=True)
    assert [(e["msg_id"], e["status"]) for e in sink.events] == [
        ("ID0", "SUCCESS"),
        ("ID1", "RECONSUME_LATER"),
        ("ID2", "SUCCESS"),
        ("ID0", "TIME_OUT"),
    ]
    assert sink.events[0]["duration_ms"] == 7


def test_consumed_marks_a_raising_listeners_failures_exception() -> None:
    tracer, sink = _tracer()
    msgs = [MessageExt("Orders", b"", f"ID{i}", 0, i, 1, 1) for i in range(2)]
    hooks.consumed(tracer, "G", msgs, {0, 1}, 3, raised=True)
    hooks.consumed(tracer, "G", msgs, (), 3, raised=False)
    assert [e["status"] for e in sink.events] == ["EXCEPTION", "EXCEPTION", "SUCCESS", "SUCCESS"]


class _HandOvers:
    """A sink that keeps what the data path hands over, without encoding it."""

    enabled = True

    def __init__(self) -> None:
        self.deferred: list[tuple[Any, tuple[Any, ...], int]] = []

    def defer(self, write: Any, args: tuple[Any, ...], events: int) -> None:
        self.deferred.append((write, args, events))


def _handing_over(monkeypatch: pytest.MonkeyPatch, at_once: bool) -> tuple[_HandOvers, Tracer]:
    """A tracer whose sink keeps the hand-overs, with events encoded at once or not."""
    monkeypatch.setattr(hooks, "ENCODE_AT_ONCE", at_once)
    sink = _HandOvers()
    return sink, Tracer(sink, Emitter("c", "ns", lambda: 1_000))  # type: ignore[arg-type]


@pytest.mark.parametrize("at_once", [True, False])
def test_consume_events_are_encoded_at_once_with_the_core_and_later_without(
    monkeypatch: pytest.MonkeyPatch, at_once: bool
) -> None:
    sink, tracer = _handing_over(monkeypatch, at_once)
    msgs = [MessageExt("Orders", b"", f"ID{i}", 0, i, 1, 1) for i in range(2)]
    hooks.consumed_ok(tracer, "G", [(msgs, 3)])
    ((write, args, count),) = sink.deferred
    assert count == 2
    encoded = list(write(*args))
    assert [decode(e)["msg_id"] for e in encoded] == ["ID0", "ID1"]
    assert (write is bulk.consumed_ok) is not at_once  # at once: only bytes are kept


def test_a_call_that_cannot_be_encoded_at_once_goes_to_the_sink_to_be_counted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sink, tracer = _handing_over(monkeypatch, True)
    beyond_a_long = MessageExt("Orders", b"", "ID", 0, 2**70, 1, 1)
    hooks.consumed(tracer, "G", [beyond_a_long], (), 1)  # never raises into the data path
    ((write, args, count),) = sink.deferred
    assert (write, count) == (bulk.consumed_calls, 1)  # the sink's thread fails it, drops, counts
    with pytest.raises(OverflowError):
        write(*args)


@pytest.mark.parametrize("at_once", [True, False])
def test_send_back_events_are_encoded_at_once_with_the_core_and_later_without(
    monkeypatch: pytest.MonkeyPatch, at_once: bool
) -> None:
    sink, tracer = _handing_over(monkeypatch, at_once)
    _record, parked_at = _parked_send_back(3, 1)
    _settled_back(tracer, 1, 3, parked_at)
    ((write, args, count),) = sink.deferred
    (event,) = [decode(e) for e in write(*args)]
    assert (count, event["event"], event["due_ms"], event["target_topic"]) == (
        1,
        "SEND_BACK",
        11_000,
        "%SCHEDULE%10s",
    )
    assert (write is bulk.sent_back) is not at_once  # at once: only bytes are kept
