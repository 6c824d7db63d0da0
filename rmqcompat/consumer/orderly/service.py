"""Orderly consumption (RocketMQ's ``ConsumeMessageOrderlyService``, SEMANTICS section 8).

Each partition is consumed by one listener call at a time, in offset order; partitions
run in parallel on ``consume_thread_max`` threads. A batch is the first
``consume_message_batch_max_size`` waiting messages of its partition. SUCCESS releases
it; anything else suspends the partition: after the context's
``suspend_current_queue_time_millis`` (clamped 10..30000 ms) the same messages are
consumed again with ``reconsume_times + 1``, and the messages behind them wait. A message
that already failed ``max_reconsume_times`` times (-1: unlimited) is dead-lettered
instead, and the partition moves on only once Kafka confirmed the dead letter; if that
send fails, the message stays and is consumed again after the suspension, as in RocketMQ.

Consume timeout: as RocketMQ's ``ProcessQueue.cleanExpiredMsg`` does nothing for orderly
consumers, a long listener call is never released (that would break the order); it is
only counted as TIME_OUT in ``stats()``.

All bookkeeping runs on the poll thread; workers only call the listener.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from collections.abc import Callable, Iterable, Mapping

from rmqcompat.clock import Clock, epoch_ms
from rmqcompat.consumer.engine import POLL_TIMEOUT_S
from rmqcompat.consumer.listener import ConsumeOrderlyContext
from rmqcompat.consumer.orderly.dead_letter import OrderlyDeadLetters
from rmqcompat.consumer.orderly.queue import OrderlyQueue
from rmqcompat.consumer.orderly.rules import (
    SUCCESS,
    OrderlyListenerFn,
    invoke_orderly,
    orderly_max_reconsume_times,
    split_suspended,
    suspend_millis,
)
from rmqcompat.consumer.orderly.workers import OrderlyBatch, OrderlyWorkers
from rmqcompat.consumer.partitions import Partitions, PartitionState
from rmqcompat.consumer.sendback import SendBack
from rmqcompat.consumer.settings import ConsumerSettings
from rmqcompat.consumer.timers import Timers
from rmqcompat.errors import ListenerKindError
from rmqcompat.message import MessageExt
from rmqcompat.properties import CONSUME_START_TIME
from rmqcompat.retry import RetryPolicy
from rmqcompat.trace import hooks
from rmqcompat.wire import Key

_log = logging.getLogger("rmqcompat.consumer")


def orderly_policy(settings: ConsumerSettings) -> RetryPolicy:
    """The group's retry policy for orderly consumption, with its limit (-1: unlimited,
    not 16)."""
    return dataclasses.replace(
        settings.retry_policy(),
        max_reconsume_times=orderly_max_reconsume_times(settings.max_reconsume_times),
        orderly=True,
    )


class OrderlyConsumeService:
    """:class:`~rmqcompat.consumer.consume_service.ConsumeService` for orderly listeners.

    ``sendback`` must route by :func:`orderly_policy` (the limit and the
    ``MAX_RECONSUME_TIMES`` property of dead letters come from it). Once ``stopping()``
    is True (the consumer shuts down) no new listener call starts: the engine's drain
    waits for the running ones only, so what it commits is exactly what was consumed.
    Besides the protocol, :meth:`release` is the revoke hook of
    :class:`~rmqcompat.consumer.membership.Membership`.
    """

    def __init__(
        self,
        settings: ConsumerSettings,
        listener: OrderlyListenerFn,
        sendback: SendBack,
        partitions: Partitions,
        clock: Callable[[], float] = time.monotonic,
        now_ms: Clock = epoch_ms,
        stopping: Callable[[], bool] = lambda: False,
    ) -> None:
        self._settings = settings
        self._listener = listener
        self._sendback = sendback
        self._tracer = sendback.tracer  # CONSUME here; SEND_BACK / DEAD_LETTER in sendback
        self._partitions = partitions
        self._clock = clock
        self._now_ms = now_ms
        self._stopping = stopping
        self._policy = orderly_policy(settings)
        self._workers = OrderlyWorkers(self._consume, settings.group, settings.consume_thread_max)
        self._timers = Timers(clock)
        self._resumes: list[float] = []  # when the suspensions now under way end
        self._queues: dict[Key, OrderlyQueue] = {}
        #: the batch with the listener, per partition (also of an earlier assignment: a
        #: partition revoked and assigned again must not start while it runs)
        self._running: dict[Key, OrderlyBatch] = {}
        self._dead_letters = OrderlyDeadLetters(sendback, partitions)

    # -- worker side ----------------------------------------------------------------

    def _consume(self, batch: OrderlyBatch) -> None:
        context = ConsumeOrderlyContext(batch.queue)
        start = str(self._now_ms())  # RocketMQ sets it on every message before the call
        for msg in batch.messages:
            msg.properties[CONSUME_START_TIME] = start
        batch.started_at = self._clock()
        # a copy (RocketMQ hands out an unmodifiable list)
        try:
            batch.status, batch.raised = invoke_orderly(
                self._listener, self._settings.group, list(batch.messages), context
            )
        except ListenerKindError as exc:  # settled on the poll thread, which stops on it
            batch.refused = exc
        batch.finished_at = self._clock()
        batch.suspend_ms = suspend_millis(
            context.suspend_current_queue_time_millis,
            self._settings.suspend_current_queue_time_millis,
        )

    # -- the ConsumeService protocol (poll thread) ------------------------------------

    def submit(self, staged: Mapping[Key, list[MessageExt]]) -> None:
        for key, msgs in staged.items():
            state = self._partitions.get(key)
            if state is None or not msgs:
                continue
            self._queue(key, state).append(msgs)
            self._dispatch(key)

    def settle(self) -> None:
        for batch in self._workers.results():
            self._settle(batch)

    def busy(self) -> bool:
        # also when a suspension ends within a poll round: the engine then waits in
        # wait(), which returns in time for it, rather than blocking in a fetch
        return bool(self._running) or self._next_resume_in() < POLL_TIMEOUT_S

    def saturated(self, timeout_s: float) -> bool:
        if self._workers.backlog() < self._settings.consume_thread_max:
            return False
        return self._workers.wait(timeout_s)

    def wait(self, timeout_s: float) -> bool:
        return self._workers.wait(min(timeout_s, self._next_resume_in()))

    def _next_resume_in(self) -> float:
        """Seconds until the next suspension ends (0 when due, infinite with none)."""
        return max(0.0, min(self._resumes) - self._clock()) if self._resumes else math.inf

    def housekeeping(self, now: float) -> None:
        self._timers.run_due(now)
        for key in [k for k, q in self._queues.items() if q.pq.dropped]:
            del self._queues[key]

    def quiet(self) -> bool:
        return not self._running and self._dead_letters.pending == 0

    def shutdown(self) -> None:
        self._workers.shutdown()

    # -- rebalance ----------------------------------------------------------------------

    def release(self, keys: Iterable[Key]) -> None:
        """Before ``keys`` are revoked: start nothing more on them, wait (together at most
        ``await_termination_s``) for their running listener calls to end and settle those,
        so the revoke commits past them and no new owner consumes a partition while this
        member still does. A call that outlasts the bound is logged and its late result
        ignored (the new owner consumes its messages again)."""
        keys = [k for k in keys if k in self._queues or k in self._running]
        for key in keys:
            queue = self._queues.get(key)
            if queue is not None:
                queue.closed = True
        deadline = self._clock() + self._settings.await_termination_s
        for key in keys:
            batch = self._running.get(key)
            if batch is None:
                continue
            if not batch.cancel_or_wait(max(0.0, deadline - self._clock())):
                _log.error(
                    "orderly listener still consuming %s[%d] after %.1f s; releasing the "
                    "partition anyway: its new owner may consume it at the same time",
                    batch.queue.topic,
                    batch.queue.queue_id,
                    self._settings.await_termination_s,
                )
            elif batch.cancelled:  # never started, never reported
                del self._running[key]
        self.settle()  # a SUCCESS that just came in is committed by the revoke
        for key in keys:
            self._queues.pop(key, None)

    # -- settling -------------------------------------------------------------------------

    def _queue(self, key: Key, state: PartitionState) -> OrderlyQueue:
        queue = self._queues.get(key)
        if queue is None or queue.pq is not state.pq:  # new, or assigned again
            queue = self._queues[key] = OrderlyQueue(state.pq)
        return queue

    def _dispatch(self, key: Key) -> None:
        """Start the next batch of ``key`` if its head is free and none of it runs."""
        queue = self._queues.get(key)
        state = self._partitions.get(key)
        if queue is None or state is None or key in self._running or not queue.ready():
            return
        if self._stopping():
            return
        msgs = queue.take(self._settings.consume_message_batch_max_size)
        batch = OrderlyBatch(key, state.queue, queue.pq, msgs)
        self._running[key] = batch
        self._workers.submit((batch,))

    def _settle(self, batch: OrderlyBatch) -> None:
        if batch.refused is not None:  # stop consuming: nothing of it is committed
            raise batch.refused
        key = batch.key
        if self._running.get(key) is batch:
            del self._running[key]
        state = self._partitions.get(key)
        queue = self._queues.get(key)
        if state is not None and batch.started_at is not None and batch.finished_at is not None:
            # RocketMQ's TIME_OUT: the call took consume_timeout or longer (counted only)
            state.consume_timeouts += (
                batch.finished_at - batch.started_at >= self._settings.consume_timeout_s
            )
        if state is None or queue is None or queue.pq is not batch.pq or batch.pq.dropped:
            self._dispatch(key)  # revoked meanwhile: its new owner consumes these again
            return
        msgs = batch.messages
        if self._tracer.enabled:
            self._trace(batch)
        if batch.status is SUCCESS:
            state.consume_ok += len(msgs)
            self._finish(key, queue, msgs)
            return
        state.consume_failed += len(msgs)
        self._suspended(key, queue, batch)

    def _trace(self, batch: OrderlyBatch) -> None:
        """CONSUME events of a settled call (before a suspension counts it): SUCCESS, else
        RECONSUME_LATER (EXCEPTION when the listener raised) for the whole batch."""
        start, end = batch.started_at, batch.finished_at
        took = 0 if start is None or end is None else int((end - start) * 1000)
        msgs = batch.messages
        failed = () if batch.status is SUCCESS else range(len(msgs))
        hooks.consumed(self._tracer, self._settings.group, msgs, failed, took, raised=batch.raised)

    def _finish(self, key: Key, queue: OrderlyQueue, msgs: list[MessageExt]) -> None:
        queue.pq.remove_all([m.queue_offset for m in msgs])
        for msg in msgs:
            self._dead_letters.forget(key, queue, msg)
        queue.done()
        self._dispatch(key)

    def _suspended(self, key: Key, queue: OrderlyQueue, batch: OrderlyBatch) -> None:
        outcome = split_suspended(batch.messages, self._policy)
        retry = list(outcome.retry)
        for msg in retry:
            msg.reconsume_times += 1
        if not outcome.dead:
            self._resume_later(key, queue, retry, batch.suspend_ms)
            return
        self._dead_letters.send(
            key,
            queue,
            outcome.dead,
            lambda kept: self._resume_later(key, queue, retry + kept, batch.suspend_ms),
        )

    def _resume_later(
        self, key: Key, queue: OrderlyQueue, retry: list[MessageExt], suspend_ms: int
    ) -> None:
        """Consume ``retry`` again first, after ``suspend_ms``; with none, go on at once."""
        if not retry:
            queue.done()
            self._dispatch(key)
            return
        queue.put_back(retry)
        delay_s = suspend_ms / 1000
        due = self._clock() + delay_s
        self._resumes.append(due)

        def resume() -> None:
            self._resumes.remove(due)
            queue.done()
            self._dispatch(key)

        self._timers.later(resume, delay_s)
