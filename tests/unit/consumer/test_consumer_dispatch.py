"""The worker pool: every batch runs once, a stuck listener holds one thread, waits wake up."""

from __future__ import annotations

import threading
import time

import pytest
from batch_kinds import BatchKind
from waiting import collect_finished

from rmqcompat.consumer.dispatch import ConsumeBatch, WorkerPool
from rmqcompat.consumer.listener import ConsumeConcurrentlyStatus
from rmqcompat.message import MessageExt, MessageQueue
from rmqcompat.process_queue import ProcessQueue, new_process_queue
from rmqcompat.properties import CONSUME_START_TIME

OK = ConsumeConcurrentlyStatus.CONSUME_SUCCESS


def _batches(
    n: int, pq: ProcessQueue | None = None, kind: type[ConsumeBatch] = ConsumeBatch
) -> list[ConsumeBatch]:
    pq = pq or ProcessQueue()
    queue = MessageQueue("T", 0)
    return [kind(("t", 0), queue, pq, [MessageExt("T", b"", str(i), 0, i, 0, 0)]) for i in range(n)]


def test_every_batch_runs_once_with_its_own_context(batch_kind: BatchKind):
    seen: list[str] = []
    pool = WorkerPool(lambda msgs, ctx: seen.append(msgs[0].msg_id) or OK, "g", 4, time.monotonic)
    try:
        pool.submit(_batches(500, kind=batch_kind.batch))
        done = collect_finished(pool, 500)
    finally:
        pool.shutdown()
    assert sorted(seen, key=int) == [str(i) for i in range(500)]
    assert len({id(b.context) for b in done}) == 500
    assert all(b.status is OK and b.started_at is not None for b in done)
    assert all(isinstance(b.context, batch_kind.context) for b in done)
    assert all(b.messages[0].properties[CONSUME_START_TIME].isdigit() for b in done)


def test_a_stuck_listener_holds_one_thread_only():
    release = threading.Event()

    def listener(msgs, ctx):
        if msgs[0].msg_id == "0":
            release.wait(5)
        return OK

    pool = WorkerPool(listener, "g", 2, time.monotonic)
    try:
        pool.submit(_batches(5))
        done = collect_finished(pool, 4)
        release.set()
        done += collect_finished(pool, 1)
    finally:
        pool.shutdown()
    assert [b.messages[0].msg_id for b in done][-1] == "0"
    assert len(done) == 5


@pytest.mark.parametrize("queue", [ProcessQueue, new_process_queue])
def test_dropped_or_expired_batches_are_skipped(batch_kind: BatchKind, queue: type[ProcessQueue]):
    calls: list[int] = []
    pq = queue()
    pq.dropped = True
    expired = _batches(2, kind=batch_kind.batch)
    for batch in expired:
        batch.expired = True
    pool = WorkerPool(lambda msgs, ctx: calls.append(1) or OK, "g", 1, time.monotonic)
    try:
        pool.submit(_batches(2, pq, batch_kind.batch) + expired)
        done = collect_finished(pool, 4)
    finally:
        pool.shutdown()
    assert calls == [] and [b.status for b in done] == [None] * 4
    assert [b.started_at for b in done] == [None] * 4
    assert all(CONSUME_START_TIME not in b.messages[0].properties for b in done)


def test_wait_returns_false_when_nothing_finishes():
    pool = WorkerPool(lambda msgs, ctx: OK, "g", 1, time.monotonic)
    try:
        assert pool.wait(0.01) is False
        assert pool.wait(0.01, backlog_below=1) is True  # nothing queued: no reason to wait
    finally:
        pool.shutdown()


def test_the_listener_gets_a_copy_so_emptying_it_cannot_change_what_is_settled(
    batch_kind: BatchKind,
):
    def drain(msgs, ctx):
        while msgs:  # a common idiom; RocketMQ hands out an unmodifiable list
            msgs.pop()
        return OK

    pool = WorkerPool(drain, "g", 1, time.monotonic)
    try:
        pool.submit(_batches(3, kind=batch_kind.batch))
        done = collect_finished(pool, 3)
    finally:
        pool.shutdown()
    assert [[m.msg_id for m in b.messages] for b in done] == [["0"], ["1"], ["2"]]
