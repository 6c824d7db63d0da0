"""What happens to a batch after the listener: ackIndex, release, send-back, timeouts.

RocketMQ's ``processConsumeResult`` and ``cleanExpireMsg`` on the poll thread. A message
leaves its process queue only when it succeeded, or when the producer confirmed its
send-back (or dead-letter). A send-back that failed for a passing reason (busy, timed
out) keeps it in flight and hands it to the listener again after
``send_back_failure_delay_s`` with ``reconsume_times + 1``; one refused for good goes to
the DLQ at once (:mod:`~rmqcompat.consumer.dead_letter`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from confluent_kafka import KafkaError

from rmqcompat.callbacks import callback
from rmqcompat.consumer.ack import all_succeeded, split_batch
from rmqcompat.consumer.dead_letter import DirectDeadLetter
from rmqcompat.consumer.dispatch import ConsumeBatch, Pool, new_consume_batch
from rmqcompat.consumer.listener import ConsumeConcurrentlyContext, ConsumeConcurrentlyStatus
from rmqcompat.consumer.partitions import Partitions, PartitionState
from rmqcompat.consumer.sendback import SendBack
from rmqcompat.consumer.settings import ConsumerSettings
from rmqcompat.consumer.timers import Timers
from rmqcompat.core import CORE
from rmqcompat.message import MessageExt
from rmqcompat.process_queue import ProcessQueue
from rmqcompat.producer.failures import is_retriable
from rmqcompat.retry import CONSUME_TIMEOUT_LEVEL
from rmqcompat.trace import bulk, hooks

if TYPE_CHECKING:
    from rmqcompat._core import ConsumeEvents

_log = logging.getLogger("rmqcompat.consumer")

#: A message whose send-back failed this many times in a row is listed as stuck (with
#: RocketMQ's 5 s re-consume delay, after about 15 s): it is re-consumed locally, its
#: partition's offset cannot pass it, and more attempts are not expected to help by
#: themselves.
STUCK_AFTER_FAILED_SEND_BACKS = 3


#: A failed message and its stored reconsume count (what send-back routes by).
_Failed = tuple[MessageExt, int]


class _Round:
    """The send-backs of one batch; failures are re-consumed together, as in RocketMQ."""

    __slots__ = ("error", "failed", "remaining")

    def __init__(self, remaining: int) -> None:
        self.remaining = remaining
        # no list until a send-back fails: one object less for each one in flight
        self.failed: tuple[_Failed, ...] | list[_Failed] = ()
        self.error: KafkaError | None = None  # the last passing failure

    def fail(self, msg: MessageExt, stored: int, err: KafkaError) -> None:
        if isinstance(self.failed, tuple):
            self.failed = []
        self.failed.append((msg, stored))
        self.error = err


class Settlement:
    """Settles batch results; owned by the poll thread. Never raises for broker errors."""

    def __init__(
        self,
        settings: ConsumerSettings,
        sendback: SendBack,
        partitions: Partitions,
        pool: Pool,
        clock: Callable[[], float],
    ) -> None:
        self._settings = settings
        self._sendback = sendback
        self._partitions = partitions
        self._pool = pool
        self._running: dict[ConsumeBatch, bool] = {}  # insertion-ordered set
        self._timers = Timers(clock)
        self._tracer = sendback.tracer
        self.pending_sendbacks = 0
        self.late_results_ignored = 0
        self._dlq = DirectDeadLetter(
            sendback, partitions, self.later, settings.send_back_failure_delay_s
        )

    def track(self, batches: list[ConsumeBatch]) -> None:
        self._running.update(dict.fromkeys(batches, True))

    def running(self) -> int:
        return len(self._running)

    def quiet(self) -> bool:
        """Nothing running and no send-back awaiting its delivery report."""
        return not self._running and self.pending_sendbacks == 0 and self._dlq.pending == 0

    def on_results(self, batches: list[ConsumeBatch]) -> None:
        """Settle finished batches (ackIndex, release, send-back), in the order given.

        Results come in runs of one partition (a fetch is per partition, workers take
        batches in order), so the partition is looked up once per run and the offsets of
        a run's successes leave the process queue in one call, before anything else
        (a split, the end of the run) can look at that queue.
        """
        tracing = self._tracer.enabled  # the poll thread's own setting: fixed for the call
        succeeded: list[tuple[list[MessageExt], int]] = []  # traced together, one append
        split: list[bulk.Call] = []  # the other calls, traced together as well
        # the events of whole successes, written by the core's settlement itself
        kept = hooks.kept_consume_events(self._tracer, self._settings.group) if tracing else None
        try:
            self._settle_runs(
                batches, succeeded if tracing else None, split if tracing else None, kept
            )
        finally:
            if kept is not None:
                hooks.consumed_kept(self._tracer, kept)
            if succeeded:
                hooks.consumed_ok(self._tracer, self._settings.group, succeeded)
            if split:
                hooks.consumed_calls(self._tracer, self._settings.group, split)
            self._sendback.trace_stored()

    def _settle_runs(
        self,
        batches: list[ConsumeBatch],
        succeeded: list[tuple[list[MessageExt], int]] | None,
        split: list[bulk.Call] | None,
        kept: ConsumeEvents | None,
    ) -> None:
        """:meth:`on_results`' loop; the calls that succeeded whole go to ``succeeded``
        (:func:`add_success`; the core's settlement writes their events to ``kept``
        instead, where it is given), the others to ``split``
        (:func:`hooks.failed_call`), unless they are None (tracing is off)."""
        running, limit = self._running, self._settings.consume_timeout_s
        pq: ProcessQueue | None = None  # the run's process queue
        state: PartitionState | None = None
        acked: list[int] = []  # offsets of the run's successes, not yet released
        at, end = 0, len(batches)
        while at < end:
            batch = batches[at]
            if batch.pq is not pq:
                self._release(state, pq, acked)
                pq, state = batch.pq, self._state(batch)
            if state is not None:
                # the run's batches from here that succeeded whole, in one call (the
                # core's takes only its own batches)
                settle = settle_successes if type(batch) is ConsumeBatch else _settle_successes
                taken, timeouts = settle(batches, at, pq, running, limit, acked, succeeded, kept)
                state.consume_timeouts += timeouts
                if taken > at:
                    at = taken
                    continue
            at += 1
            start, finish = batch.started_at, batch.finished_at
            # RocketMQ's TIME_OUT, late results too: the call itself took that long
            if finish is not None and start is not None and finish - start >= limit:
                if state is not None:
                    state.consume_timeouts += 1
            if running.pop(batch, None) is None:
                self.late_results_ignored += 1  # released by the consume timeout already
                continue
            status, context = batch.status, batch.context
            if status is None or context is None or state is None:
                if batch.refused is not None:  # stop consuming: nothing of it is committed
                    raise batch.refused
                continue  # the partition was revoked: its new owner consumes these again
            self._release(state, pq, acked)
            self._settle_split(batch, state, status, context, split)
        self._release(state, pq, acked)

    @staticmethod
    def _release(state: PartitionState | None, pq: ProcessQueue | None, acked: list[int]) -> None:
        """Release ``acked`` (then empty) from ``pq``: successes count as RocketMQ's ok."""
        if acked and state is not None and pq is not None:
            state.consume_ok += len(acked)
            pq.remove_all(acked)
            acked.clear()

    def _state(self, batch: ConsumeBatch) -> PartitionState | None:
        """The batch's partition, unless it was revoked (or re-assigned) since."""
        state = self._partitions.get(batch.key)
        return (
            state if state is not None and state.pq is batch.pq and not batch.pq.dropped else None
        )

    def _settle_split(
        self,
        batch: ConsumeBatch,
        state: PartitionState,
        status: ConsumeConcurrentlyStatus,
        context: ConsumeConcurrentlyContext,
        traced: list[bulk.Call] | None,
    ) -> None:
        msgs = batch.messages
        outcome = split_batch(status, context.ack_index, len(msgs), context.marked)
        if traced is not None:
            traced.append(
                hooks.failed_call(msgs, outcome.failed, _took_ms(batch), False, batch.raised)
            )
        state.consume_ok += len(outcome.ok)  # RocketMQ: ok = ackIndex + 1
        state.consume_failed += len(outcome.failed)  # and failed = size - ok
        for i in outcome.ok:
            batch.pq.remove(msgs[i].queue_offset)
        failed = [(msgs[i], batch.stored[i]) for i in outcome.failed]
        if failed:
            self._send_back(batch, failed, context.delay_level_when_next_consume)

    def _trace_timed_out(self, batch: ConsumeBatch, end: float) -> None:
        """CONSUME events of a call the consume timeout released at ``end``: TIME_OUT."""
        msgs, took = batch.messages, _took_ms(batch, end)
        failed = range(len(msgs))
        hooks.consumed(self._tracer, self._settings.group, msgs, failed, took, True, batch.raised)

    def _send_back(self, batch: ConsumeBatch, failed: list[_Failed], delay_level: int) -> None:
        """Hand each failed message to send-back, which routes it (a BROADCASTING consumer's
        is dropped there) and reports when it may leave the process queue. A batch's only
        failed message has no round (at batch size 1, the common case, one tracked object
        less in flight for each)."""
        round_ = _Round(len(failed)) if len(failed) > 1 else None
        for msg, stored in failed:
            self.pending_sendbacks += 1
            done = callback(Settlement._on_sent, self, batch, msg, stored, round_)
            self._sendback.send(msg, stored, delay_level, done)

    def _on_sent(
        self,
        batch: ConsumeBatch,
        msg: MessageExt,
        stored: int,
        round_: _Round | None,
        err: KafkaError | None,
    ) -> None:
        """The producer's word on one send-back of ``round_`` (None: the batch's only one)."""
        self.pending_sendbacks -= 1
        if err is None:
            batch.pq.remove(msg.queue_offset)
            self._partitions.unstick(batch.key, msg.queue_offset)
        elif not is_retriable(err):  # consuming it again would only fail the same way
            self._dlq.send(batch, msg, stored, err)
        elif round_ is None:
            self._consume_later(batch, ((msg, stored),), err)
        else:
            round_.fail(msg, stored, err)
        if round_ is not None:
            round_.remaining -= 1
            if round_.remaining == 0 and round_.error is not None:
                self._consume_later(batch, round_.failed, round_.error)

    def _consume_later(
        self, batch: ConsumeBatch, failed: Sequence[_Failed], err: KafkaError
    ) -> None:
        """RocketMQ's fallback: the listener sees ``reconsume_times + 1``; the stored count
        (what a later send-back routes by) stays, so their difference counts the send-backs
        that failed in a row. From :data:`STUCK_AFTER_FAILED_SEND_BACKS` on, the message is
        listed as stuck (until a send-back or a consume succeeds)."""
        _log.warning(
            "send-back failed; consuming again locally in %.1f s (group=%s, msg_ids=%s)",
            self._settings.send_back_failure_delay_s,
            self._settings.group,
            ",".join(m.msg_id for m, _ in failed),
        )
        for msg, stored in failed:
            msg.reconsume_times += 1
            failures = msg.reconsume_times - stored
            if failures >= STUCK_AFTER_FAILED_SEND_BACKS:
                cause = f"send-back failed {failures} times in a row ({err.name()}: {err.str()})"
                self._partitions.mark_stuck(
                    batch.key, batch.pq, msg.queue_offset, msg.msg_id, cause
                )

        def resubmit() -> None:
            if batch.pq.dropped:
                return
            size = self._settings.consume_message_batch_max_size
            again = [
                new_consume_batch(
                    batch.key,
                    batch.queue,
                    batch.pq,
                    [m for m, _ in failed[i : i + size]],
                    tuple([stored for _, stored in failed[i : i + size]]),
                )
                for i in range(0, len(failed), size)
            ]
            self.track(again)
            self._pool.submit(again)

        self.later(resubmit)

    def later(self, action: Callable[[], None], delay_s: float | None = None) -> None:
        """Run ``action`` on the poll thread after ``delay_s`` (default
        ``send_back_failure_delay_s``)."""
        wait = self._settings.send_back_failure_delay_s if delay_s is None else delay_s
        self._timers.later(action, wait)

    def run_due(self, now: float) -> None:
        self._timers.run_due(now)

    def expire(self, now: float) -> None:
        """Release batches consuming longer than ``consume_timeout``: send them back."""
        limit = self._settings.consume_timeout_s
        for batch in list(self._running):
            if batch.started_at is None or now - batch.started_at <= limit or batch.pq.dropped:
                continue
            del self._running[batch]
            batch.expired = True
            if self._tracer.enabled:
                self._trace_timed_out(batch, now)
            msgs = [
                (m, stored)
                for m, stored in zip(batch.messages, batch.stored, strict=True)
                if m.queue_offset in batch.pq
            ]
            _log.warning(
                "consume timeout: sending back %s (group=%s, %s[%d])",
                ",".join(m.msg_id for m, _ in msgs),
                self._settings.group,
                batch.queue.topic,
                batch.queue.queue_id,
            )
            self._send_back(batch, msgs, CONSUME_TIMEOUT_LEVEL)


def add_success(
    succeeded: list[tuple[list[MessageExt], int]], msgs: Sequence[MessageExt], took_ms: int
) -> None:
    """Add a listener call that succeeded whole, on ``msgs`` in ``took_ms``, to the calls
    to trace: to the last entry when it took as long (at batch size 1 most calls take
    0 ms, and an entry per run of them is less work than one per call), else as a new
    entry. The entries' lists are their own: the batches' are copied, never extended."""
    if succeeded:
        last, last_ms = succeeded[-1]
        if last_ms == took_ms:
            last.extend(msgs)
            return
    succeeded.append((list(msgs), took_ms))


def settle_successes(
    batches: Sequence[ConsumeBatch],
    start: int,
    pq: ProcessQueue,
    running: dict[ConsumeBatch, bool],
    limit: float,
    acked: list[int],
    succeeded: list[tuple[list[MessageExt], int]] | None,
    kept: ConsumeEvents | None = None,
) -> tuple[int, int]:
    """Settle ``batches[start:]`` in one call while each is of ``pq`` (a partition still
    owned), still ``running`` and succeeded whole (the settle loop's one place for such
    batches; the loop decides every other): each leaves
    ``running``, its messages' offsets go to ``acked``, and unless ``succeeded`` is None
    (tracing off) its messages and listener time in ms are added to it
    (:func:`add_success`). ``kept`` is the core's: there each message's CONSUME event is
    written to ``kept`` instead (from the fields the direct fetch kept for it, or encoded
    from the message), and only a message whose event cannot be encoded is added; the pure
    path has no ``ConsumeEvents``, and ignores it.

    Returns the index of the first batch it did not take, which the loop then decides,
    and how many of those it took ran for at least ``limit`` seconds (RocketMQ's consume
    timeouts, counted late too). The pure-Python reference of the core's
    ``settle_successes``, which takes the core's batches only and leaves any other to the
    loop (``tests/unit/consumer/test_consume_batch_core.py`` runs both).
    """
    timeouts, end = 0, len(batches)
    while start < end:
        batch = batches[start]
        status, context = batch.status, batch.context
        if batch.pq is not pq or status is None or context is None or batch not in running:
            break
        msgs = batch.messages
        if not all_succeeded(status, context.ack_index, len(msgs), context.marked):
            break
        del running[batch]
        began, finished = batch.started_at, batch.finished_at
        if finished is not None and began is not None and finished - began >= limit:
            timeouts += 1
        if succeeded is not None:
            add_success(succeeded, msgs, _took_ms(batch))
        for msg in msgs:
            acked.append(msg.queue_offset)
        start += 1
    return start, timeouts


_settle_successes = settle_successes if CORE is None else CORE.settle_successes


def _took_ms(batch: ConsumeBatch, end: float | None = None) -> int:
    """The listener call's time in ms, until it finished or ``end`` (0 if not known)."""
    start, end = batch.started_at, batch.finished_at if end is None else end
    return 0 if start is None or end is None else int((end - start) * 1000)
