"""Listener threads of orderly consumption and the batches they run.

The service submits at most one batch per partition at a time, so a partition is never
consumed by two threads at once; partitions run in parallel up to the thread count.
Workers only call the listener; a finished batch goes back to the poll thread, which does
all bookkeeping. A batch not yet started can be cancelled, and the poll thread can wait
(bounded) for a started one to end: a revoked partition is released only then.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable

from rmqcompat.consumer.handoff import HandOff
from rmqcompat.consumer.listener import ConsumeOrderlyStatus
from rmqcompat.errors import ListenerKindError
from rmqcompat.message import MessageExt, MessageQueue
from rmqcompat.process_queue import ProcessQueue


class _Phase(enum.Enum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    CANCELLED = "cancelled"


class OrderlyBatch:
    """The head messages of one partition handed to the listener in one call.

    ``status`` and ``suspend_ms`` (the clamped pause after a suspension) are written by the
    worker once the listener returned, ``started_at`` / ``finished_at`` (monotonic
    seconds) around the call.
    """

    __slots__ = (
        "_ended",
        "_lock",
        "_phase",
        "finished_at",
        "key",
        "messages",
        "pq",
        "queue",
        "raised",
        "refused",
        "started_at",
        "status",
        "suspend_ms",
    )

    def __init__(
        self, key: tuple[str, int], queue: MessageQueue, pq: ProcessQueue, msgs: list[MessageExt]
    ) -> None:
        self.key = key
        self.queue = queue
        self.pq = pq
        self.messages = msgs
        self.status: ConsumeOrderlyStatus | None = None
        self.raised = False  # the listener raised (CONSUME traced as EXCEPTION)
        #: the listener answered for the other consume mode: the poll thread raises it
        self.refused: ListenerKindError | None = None
        self.suspend_ms = 0
        self.started_at: float | None = None
        self.finished_at: float | None = None
        self._phase = _Phase.QUEUED
        self._lock = threading.Lock()
        self._ended = threading.Event()

    def begin(self) -> bool:
        """A worker takes the batch: False if it was cancelled (then it must not run)."""
        with self._lock:
            if self._phase is not _Phase.QUEUED:
                return False
            self._phase = _Phase.RUNNING
            return True

    def end(self) -> None:
        """The worker's listener call returned."""
        with self._lock:
            self._phase = _Phase.DONE
        self._ended.set()

    @property
    def cancelled(self) -> bool:
        with self._lock:
            return self._phase is _Phase.CANCELLED

    def cancel_or_wait(self, timeout_s: float) -> bool:
        """Cancel the batch if no worker took it, else wait up to ``timeout_s`` for its
        listener call to end. True: it will not run or has ended; False: still running."""
        with self._lock:
            if self._phase is _Phase.QUEUED:
                self._phase = _Phase.CANCELLED
                return True
        return self._ended.wait(timeout_s)


class OrderlyWorkers(HandOff[OrderlyBatch]):
    """``threads`` listener threads running ``run(batch)`` (:class:`HandOff`), in
    submission order. Cancelled batches never run and are not reported."""

    def __init__(self, run: Callable[[OrderlyBatch], None], group: str, threads: int) -> None:
        self._consume = run
        super().__init__(self._take, f"consume-orderly-{group}", threads)

    def _take(self, batch: OrderlyBatch) -> bool:
        if not batch.begin():
            return False
        try:
            self._consume(batch)
        finally:
            batch.end()
        return True

    def shutdown(self) -> None:
        """Stop the threads once their current listener call returns (does not wait);
        batches not started are cancelled."""
        for batch in self.withdraw():
            batch.cancel_or_wait(0)
        super().shutdown()
