"""Concurrent consumption's batches and the worker pool that hands them to the listener.

Workers only call the listener; every finished batch goes back to the poll thread
(:mod:`rmqcompat.consumer.handoff`), so all bookkeeping (process queues, send-back,
offsets) stays single-threaded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from rmqcompat.clock import Clock, epoch_ms
from rmqcompat.consumer.handoff import HandOff
from rmqcompat.consumer.listener import (
    ConsumeConcurrentlyContext,
    ConsumeConcurrentlyStatus,
    ListenerFn,
    invoke,
)
from rmqcompat.core import CORE
from rmqcompat.errors import ListenerKindError
from rmqcompat.message import MessageExt, MessageQueue
from rmqcompat.process_queue import ProcessQueue
from rmqcompat.properties import CONSUME_START_TIME

#: How long (monotonic seconds) a CONSUME_START_TIME text is reused for later calls.
STAMP_REUSE_S = 0.001


class ConsumeBatch:
    """Up to ``consume_message_batch_max_size`` messages of one partition, and their result.

    ``stored`` holds each message's stored reconsume count (what the broker knows), which
    send-back routes by; ``messages`` may show more after a failed send-back (RocketMQ's
    local +1). ``started_at`` and ``finished_at`` (monotonic seconds) are written by the
    worker around the listener call, ``status`` and ``context`` when it returned
    (``status`` None: skipped because the partition was dropped or the batch expired
    first). ``expired`` is written by the poll thread when the consume timeout released
    the batch. Identity is the batch itself.

    The reference of the core's ``ConsumeBatch`` (``native/src/consume_batch.rs``), which
    the consumers use where it is built: the same fields and methods, ``messages`` and
    ``stored`` read-only (it hands out a new list of the messages at each read), and out
    of the cyclic collector's sight while it is in flight.
    """

    __slots__ = (
        "context",
        "expired",
        "finished_at",
        "key",
        "messages",
        "pq",
        "queue",
        "raised",
        "refused",
        "started_at",
        "status",
        "stored",
    )

    def __init__(
        self,
        key: tuple[str, int],
        queue: MessageQueue,
        pq: ProcessQueue,
        messages: list[MessageExt],
        stored: tuple[int, ...] | None = None,
    ) -> None:
        self.key = key
        self.queue = queue
        self.pq = pq
        self.messages = messages
        # a tuple of ints: untracked by the cyclic GC once seen, while the batch is in flight
        self.stored = tuple([m.reconsume_times for m in messages]) if stored is None else stored
        self.started_at: float | None = None
        self.finished_at: float | None = None
        self.expired = False
        self.status: ConsumeConcurrentlyStatus | None = None
        self.context: ConsumeConcurrentlyContext | None = None
        self.raised = False  # the listener raised (CONSUME traced as EXCEPTION)
        #: the listener answered for the other consume mode: the poll thread raises it
        self.refused: ListenerKindError | None = None

    def start(
        self, started: float, stamp: str
    ) -> tuple[list[MessageExt], ConsumeConcurrentlyContext] | None:
        """Begin the listener call at ``started`` (monotonic seconds): a new context, and
        each message stamped with ``stamp`` as its CONSUME_START_TIME. Returns what the
        listener is given (the messages and the context), or None when the batch is not to
        run (its partition was dropped or the consume timeout released it first; it is
        reported with ``status`` None).

        The list is a copy (RocketMQ hands out an unmodifiable list): a listener that
        empties it does not change what settlement releases.
        """
        self.context = context = ConsumeConcurrentlyContext(self.queue)
        if self.pq.dropped or self.expired:
            return None
        self.started_at = started
        for msg in self.messages:
            msg.properties[CONSUME_START_TIME] = stamp
        return list(self.messages), context


def add_batches(
    key: tuple[str, int],
    queue: MessageQueue,
    pq: ProcessQueue,
    messages: list[MessageExt],
    size: int,
    out: list[ConsumeBatch],
) -> None:
    """Cut ``messages`` (one partition's, in order) into batches of at most ``size`` and
    append them to ``out``. The pure-Python reference of the core's ``add_batches``, whose
    batches are the core's ``ConsumeBatch``
    (``tests/unit/consumer/test_consume_batch_core.py`` runs both).
    """
    if size < 1:
        raise ValueError("a batch holds at least one message")
    if size == 1:  # RocketMQ's default: one message per listener call
        # the stored count given here: no per-batch list comprehension
        out += [ConsumeBatch(key, queue, pq, [m], (m.reconsume_times,)) for m in messages]
    else:
        out += [
            ConsumeBatch(key, queue, pq, messages[i : i + size])
            for i in range(0, len(messages), size)
        ]


#: The batch class in use, and its :func:`add_batches`: the core's where it is built.
new_consume_batch: type[ConsumeBatch] = ConsumeBatch if CORE is None else CORE.ConsumeBatch
add_consume_batches = add_batches if CORE is None else CORE.add_batches


class Pool(Protocol):
    """What concurrent consumption needs of whatever runs its batches: the
    :class:`WorkerPool` here, or a RocketMQ 5 SimpleConsumer's hand-over
    (:class:`rmqcompat.v5.held_pool.HeldPool`)."""

    def submit(self, batches: Sequence[ConsumeBatch]) -> None: ...

    def backlog(self) -> int: ...

    def wait(self, timeout: float, backlog_below: int | None = None) -> bool: ...

    def results(self) -> list[ConsumeBatch]: ...

    def shutdown(self) -> None: ...


class BatchRunner:
    """Runs a batch's listener call on a worker thread (:class:`WorkerPool`'s job).

    Reports every batch (True): run, or skipped when :meth:`ConsumeBatch.start` says so.
    The reference of the core's ``BatchRunner``, which the pool uses where the core is
    built (``tests/unit/consumer/test_consume_batch_core.py`` runs both).
    """

    __slots__ = ("_clock", "_group", "_listener", "_now_ms", "_stamp")

    def __init__(
        self, listener: ListenerFn, group: str, clock: Callable[[], float], now_ms: Clock
    ) -> None:
        self._listener = listener
        self._group = group
        self._clock = clock
        self._now_ms = now_ms
        self._stamp = (-1.0, "")  # the last CONSUME_START_TIME text and until when it holds

    def __call__(self, batch: ConsumeBatch) -> bool:
        started = self._clock()
        # RocketMQ stamps every message with the wall clock before the call; the text is
        # reused for calls starting within STAMP_REUSE_S of its reading (so it is at most
        # 1 ms behind): reading the wall clock costs more than the rest of the stamping
        stamp = self._stamp  # one (reuse-until, text) tuple: read and replaced whole
        if started >= stamp[0]:
            stamp = self._stamp = (started + STAMP_REUSE_S, str(self._now_ms()))
        call = batch.start(started, stamp[1])
        if call is None:
            return True  # reported unrun (status None)
        try:
            batch.status, batch.raised = invoke(self._listener, self._group, *call)
        except ListenerKindError as exc:  # settled on the poll thread, which stops on it
            batch.refused = exc
        batch.finished_at = self._clock()
        return True


#: The runner the pool uses: the core's where it is built.
new_batch_runner: type[BatchRunner] = BatchRunner if CORE is None else CORE.BatchRunner


class WorkerPool(HandOff[ConsumeBatch]):
    """``threads`` workers calling ``listener`` (:class:`HandOff`, :class:`BatchRunner`);
    finished batches, run or skipped, are read with :meth:`results`."""

    def __init__(
        self,
        listener: ListenerFn,
        group: str,
        threads: int,
        clock: Callable[[], float],
        now_ms: Clock = epoch_ms,
    ) -> None:
        runner = new_batch_runner(listener, group, clock, now_ms)
        super().__init__(runner, f"consume-{group}", threads)
