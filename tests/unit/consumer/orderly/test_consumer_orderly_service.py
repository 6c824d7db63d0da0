"""The orderly consume service behind the engine's seam, with real worker threads, a fake
clock for suspensions and a sink that answers at once: one call per partition at a time
in offset order, suspensions in place, dead letters before the partition moves on,
nothing lost when the DLQ fails, and revokes that wait for the running call."""

from __future__ import annotations

import itertools
import logging
import threading
import time
from datetime import timedelta

import pytest
from confluent_kafka import KafkaError

from rmqcompat.config import ClientConfig
from rmqcompat.consumer.listener import (
    ConsumeOrderlyStatus,
    MessageModel,
)
from rmqcompat.consumer.orderly import OrderlyConsumeService, orderly_policy
from rmqcompat.consumer.partitions import Partitions
from rmqcompat.consumer.sendback import SendBack
from rmqcompat.consumer.settings import ConsumerSettings
from rmqcompat.message import MessageExt, MessageQueue
from rmqcompat.topics.naming import to_kafka_topic

A, B = ("T", 0), ("T", 1)
SUCCESS = ConsumeOrderlyStatus.SUCCESS
SUSPEND = ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT
DLQ = to_kafka_topic("%DLQ%g", "")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Sink:
    """Answers every produce at once: with the next of ``errors`` while any are left."""

    def __init__(self) -> None:
        self.records: list = []
        self.errors: list[KafkaError] = []

    def produce(self, record, done) -> None:
        self.records.append(record)
        done(self.errors.pop(0) if self.errors else None)


class Calls:
    """A listener recording (partition, offsets, reconsume times, start, end) per call."""

    def __init__(self, behave=lambda msgs, ctx: SUCCESS, work_s: float = 0.0) -> None:
        self.behave, self.work_s = behave, work_s
        self.calls: list[tuple[int, list[int], list[int], float, float]] = []
        self.lock = threading.Lock()

    def __call__(self, msgs, ctx):
        start = time.monotonic()
        time.sleep(self.work_s)
        try:
            return self.behave(msgs, ctx)
        finally:
            with self.lock:
                self.calls.append(
                    (
                        ctx.message_queue.queue_id,
                        [m.queue_offset for m in msgs],
                        [m.reconsume_times for m in msgs],
                        start,
                        time.monotonic(),
                    )
                )

    def offsets(self, partition: int = 0) -> list[list[int]]:
        with self.lock:
            return [offs for p, offs, _, _, _ in self.calls if p == partition]


def _service(listener, clock=None, keys=(A,), **settings):
    settings.setdefault("consume_thread_max", 4)
    s = ConsumerSettings("g", ClientConfig("127.0.0.1:1"), **settings)
    partitions = Partitions(s, lambda offsets, asynchronous: None)
    for key in keys:
        partitions.add(key, MessageQueue("T", key[1]), 0)
    sink = Sink()
    sendback = SendBack(sink, orderly_policy(s), "", now_ms=lambda: 0)
    clock = clock or Clock()
    stop = threading.Event()
    service = OrderlyConsumeService(
        s, listener, sendback, partitions, clock=clock, now_ms=lambda: 1234, stopping=stop.is_set
    )
    return service, partitions, sink, stop


def _submit(service, partitions, key, offsets) -> list[MessageExt]:
    msgs = [MessageExt("T", b"x", f"m{key[1]}-{o}", key[1], o, 0, 0) for o in offsets]
    for msg in msgs:
        partitions.get(key).pq.add(msg.queue_offset, 1)
    service.submit({key: msgs})
    return msgs


def _drive(service, until, clock=None, timeout=10.0) -> None:
    """Run the poll thread's part (settle, housekeeping) until ``until()``."""
    deadline = time.monotonic() + timeout
    while not until():
        assert time.monotonic() < deadline, "timed out"
        service.wait(0.02)
        service.settle()
        service.housekeeping(clock() if clock else 0.0)


def test_one_call_per_partition_at_a_time_in_offset_order_partitions_in_parallel():
    calls = Calls(work_s=0.02)
    service, partitions, _, _ = _service(calls, keys=(A, B), consume_message_batch_max_size=2)
    _submit(service, partitions, A, range(7))
    _submit(service, partitions, B, range(5))
    _drive(service, lambda: service.quiet() and len(calls.calls) == 7)

    assert calls.offsets(0) == [[0, 1], [2, 3], [4, 5], [6]]
    assert calls.offsets(1) == [[0, 1], [2, 3], [4]]
    for part in (0, 1):
        spans = sorted((s, e) for p, _, _, s, e in calls.calls if p == part)
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))
    a_calls = [c for c in calls.calls if c[0] == 0]
    b_calls = [c for c in calls.calls if c[0] == 1]
    assert any(a[3] < b[4] and b[3] < a[4] for a in a_calls for b in b_calls)  # in parallel
    assert partitions.get(A).pq.commit_offset() == 7
    service.shutdown()


def test_a_suspended_batch_comes_back_after_its_interval_and_later_messages_wait():
    clock = Clock()

    def behave(msgs, ctx):
        if msgs[0].queue_offset == 0 and msgs[0].reconsume_times == 0:
            ctx.suspend_current_queue_time_millis = 500
            return SUSPEND
        return SUCCESS

    calls = Calls(behave)
    service, partitions, sink, _ = _service(calls, clock)
    _submit(service, partitions, A, range(3))
    _drive(service, lambda: len(calls.calls) == 1 and not service.busy())
    service.settle()

    clock.now += 0.499
    service.housekeeping(clock.now)
    time.sleep(0.05)
    assert len(calls.calls) == 1  # still suspended: nothing behind it started
    assert partitions.get(A).pq.commit_offset() == 0
    clock.now += 0.001
    _drive(service, lambda: len(calls.calls) == 3, clock)

    assert [c[1:3] for c in calls.calls] == [([0], [0]), ([0], [1]), ([1], [0])]
    _drive(service, lambda: len(calls.calls) == 4, clock)
    assert calls.calls[3][1] == [2]
    assert sink.records == []  # retried in place, never sent back
    service.shutdown()


def test_a_context_left_at_minus_one_suspends_for_the_consumers_setting():
    clock = Clock()
    calls = Calls(lambda msgs, ctx: SUSPEND if msgs[0].reconsume_times == 0 else SUCCESS)
    service, partitions, _, _ = _service(calls, clock, suspend_current_queue_time_millis=200)
    _submit(service, partitions, A, [0])
    _drive(service, lambda: len(calls.calls) == 1 and not service.busy())
    service.settle()
    clock.now += 0.199
    service.housekeeping(clock.now)
    time.sleep(0.05)
    assert len(calls.calls) == 1  # RocketMQ's default of 1000 ms would also hold here
    clock.now += 0.002
    _drive(service, lambda: len(calls.calls) == 2, clock)  # but 200 ms is the setting
    service.shutdown()


def test_past_max_reconsume_times_the_message_is_dead_lettered_and_the_partition_moves_on():
    clock = Clock()
    calls = Calls(lambda msgs, ctx: SUSPEND if msgs[0].queue_offset == 0 else SUCCESS)
    service, partitions, sink, _ = _service(calls, clock, max_reconsume_times=2)
    _submit(service, partitions, A, range(2))

    for n in range(1, 5):
        _drive(service, lambda n=n: len(calls.calls) >= n, clock)
        clock.now += 1.0  # the default suspension: 1000 ms

    assert [c[1:3] for c in calls.calls] == [([0], [0]), ([0], [1]), ([0], [2]), ([1], [0])]
    (record,) = sink.records
    assert record.topic == DLQ
    headers = dict(record.headers)
    # RocketMQ 5 orderly dead letters carry the limit, and DELAY -1
    assert headers["RECONSUME_TIME"] == b"3" and headers["MAX_RECONSUME_TIMES"] == b"2"
    assert headers["DELAY"] == b"-1"
    assert partitions.get(A).pq.commit_offset() == 2
    assert partitions.get(A).consume_failed == 3 and partitions.get(A).consume_ok == 1
    service.shutdown()


def test_a_failed_dead_letter_keeps_the_message_consumes_it_again_and_reports_it_stuck():
    clock = Clock()
    calls = Calls(lambda msgs, ctx: SUSPEND if msgs[0].queue_offset == 0 else SUCCESS)
    service, partitions, sink, _ = _service(calls, clock, max_reconsume_times=0)
    sink.errors = [KafkaError(KafkaError._MSG_TIMED_OUT)] * 3
    _submit(service, partitions, A, [0, 1])

    for n in range(1, 5):
        _drive(service, lambda n=n: len(sink.records) == n and service.quiet(), clock)
        if n < 4:
            assert 0 in partitions.get(A).pq  # kept: the offset cannot pass it
            clock.now += 1.0

    assert [c[1:3] for c in calls.calls[:4]] == [([0], [i]) for i in range(4)]
    assert partitions.stuck() == {}  # unstuck once the DLQ took it
    assert 0 not in partitions.get(A).pq
    _drive(service, lambda: len(calls.calls) >= 5, clock)
    assert calls.calls[4][1] == [1]
    service.shutdown()


def test_three_failed_dead_letters_in_a_row_report_the_message_stuck(caplog):
    clock = Clock()
    service, partitions, sink, _ = _service(
        Calls(lambda m, c: SUSPEND), clock, max_reconsume_times=0
    )
    sink.errors = [KafkaError(KafkaError._MSG_TIMED_OUT)] * 10
    _submit(service, partitions, A, [0])
    with caplog.at_level(logging.ERROR, "rmqcompat.consumer"):
        for n in range(1, 4):
            _drive(service, lambda n=n: len(sink.records) == n and service.quiet(), clock)
            clock.now += 1.0
    assert list(partitions.stuck()) == ["m0-0"]
    assert "dead-lettering m0-0" in caplog.text
    service.shutdown()


def test_release_waits_for_the_running_call_and_settles_it_before_the_revoke_commits():
    entered, go = threading.Event(), threading.Event()

    def behave(msgs, ctx):
        entered.set()
        go.wait(5)
        return SUCCESS

    service, partitions, _, _ = _service(Calls(behave))
    _submit(service, partitions, A, [0, 1])
    assert entered.wait(5)
    threading.Timer(0.2, go.set).start()
    service.release([A])
    assert go.is_set()  # release returned only after the running call could end
    assert partitions.get(A).pq.commit_offset() == 1  # the finished call is settled
    assert not service.busy()
    partitions.drop([A], commit=True)
    time.sleep(0.05)
    service.settle()
    assert len(partitions.keys()) == 0
    service.shutdown()


def test_release_gives_up_after_await_termination_and_a_reassigned_partition_waits(caplog):
    go = threading.Event()
    calls = Calls(lambda m, c: go.wait(5) and SUCCESS)
    service, partitions, _, _ = _service(calls, await_termination_s=0.1)
    _submit(service, partitions, A, [0])
    time.sleep(0.05)
    with caplog.at_level(logging.ERROR, "rmqcompat.consumer"):
        service.release([A])
    assert not calls.calls  # release gave up while the listener still ran
    assert "still consuming T[0]" in caplog.text
    partitions.drop([A], commit=True)
    partitions.add(A, MessageQueue("T", 0), 0)  # assigned to this member again
    _submit(service, partitions, A, [0, 1])
    time.sleep(0.1)
    service.settle()
    assert len(calls.calls) == 0  # the old call still runs: the new queue must wait
    go.set()
    _drive(service, lambda: len(calls.calls) == 3)
    assert [c[1] for c in calls.calls] == [[0], [0], [1]]
    service.shutdown()


def test_a_released_partitions_queued_batch_never_runs():
    go = threading.Event()
    calls = Calls(lambda m, c: go.wait(5) and SUCCESS)
    service, partitions, _, _ = _service(calls, keys=(A, B), consume_thread_max=1)
    _submit(service, partitions, A, [0])
    _submit(service, partitions, B, [0])  # queued behind A on the only thread
    service.release([B])
    partitions.drop([B], commit=True)
    go.set()
    _drive(service, lambda: service.quiet())
    time.sleep(0.05)
    assert [c[0] for c in calls.calls] == [0]
    service.shutdown()


def test_no_new_call_starts_once_the_consumer_stops():
    calls = Calls(work_s=0.3)
    service, partitions, _, stop = _service(calls)
    _submit(service, partitions, A, range(5))
    time.sleep(0.01)
    stop.set()
    _drive(service, service.quiet)
    time.sleep(0.1)
    service.settle()
    assert calls.offsets() == [[0]]
    assert partitions.get(A).pq.commit_offset() == 1  # exactly what was consumed
    service.shutdown()


def test_a_call_past_the_consume_timeout_is_counted_not_released():
    calls = Calls(work_s=0.1)
    service, partitions, sink, _ = _service(
        calls, time.monotonic, consume_timeout=timedelta(milliseconds=50)
    )
    _submit(service, partitions, A, [0, 1])
    _drive(service, lambda: len(calls.calls) == 2 and service.quiet())
    assert partitions.get(A).consume_timeouts == 2
    assert sink.records == [] and calls.offsets() == [[0], [1]]
    service.shutdown()


def test_broadcasting_dead_letters_a_message_past_the_limit():
    """RocketMQ's orderly checkReconsumeTimes sends it back whatever the model: to the DLQ."""
    clock = Clock()
    calls = Calls(lambda m, c: SUSPEND if m[0].queue_offset == 0 else SUCCESS)
    service, partitions, sink, _ = _service(
        calls, clock, max_reconsume_times=0, message_model=MessageModel.BROADCASTING
    )
    _submit(service, partitions, A, [0, 1])
    _drive(service, lambda: len(calls.calls) == 2, clock)
    assert [r.topic for r in sink.records] == [to_kafka_topic("%DLQ%g", "")]
    assert partitions.get(A).pq.commit_offset() == 2
    service.shutdown()


def test_every_message_carries_its_consume_start_time_and_the_listener_gets_a_copy():
    seen: list = []

    def behave(msgs, ctx):
        seen.append([m.properties.get("CONSUME_START_TIME") for m in msgs])
        msgs.clear()  # must not change what is settled
        return SUCCESS

    service, partitions, _, _ = _service(Calls(behave), consume_message_batch_max_size=2)
    _submit(service, partitions, A, [0, 1])
    _drive(service, lambda: len(seen) == 1 and service.quiet())
    assert seen == [["1234", "1234"]]
    assert partitions.get(A).pq.commit_offset() == 2
    service.shutdown()


def test_the_engine_is_told_to_wait_for_a_suspension_that_ends_within_a_poll_round(monkeypatch):
    clock = Clock()
    calls = Calls(lambda m, c: SUSPEND if m[0].reconsume_times == 0 else SUCCESS)
    service, partitions, _, _ = _service(calls, clock)
    _submit(service, partitions, A, [0])
    _drive(service, lambda: len(calls.calls) == 1 and not service.busy(), clock)
    assert not service.busy()  # 1 s to go: the engine may block in a fetch meanwhile
    clock.now += 0.99
    assert service.busy()  # 10 ms to go: wait() instead, which returns in time
    waited: list[float] = []
    with monkeypatch.context() as patch:
        patch.setattr(service._workers, "wait", lambda timeout_s: waited.append(timeout_s))
        service.wait(0.05)
    assert waited == [pytest.approx(0.01)]  # until the suspension ends, not the whole 0.05 s
    clock.now += 0.01
    _drive(service, lambda: len(calls.calls) == 2, clock)
    service.shutdown()
