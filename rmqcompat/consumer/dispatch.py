"""Batches of messages and the worker pool that hands them to the listener.

Workers only call the listener; every result goes back to the poll thread through a
queue, so all bookkeeping (process queues, send-back, offsets) stays single-threaded.
"""

from __future__ import annotations

import itertools
import queue
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from rmqcompat.consumer.listener import (
    ConsumeConcurrentlyContext,
    ConsumeConcurrentlyStatus,
    ListenerFn,
    invoke,
)
from rmqcompat.consumer.process_queue import ProcessQueue
from rmqcompat.message import MessageExt, MessageQueue

_ids = itertools.count()


@dataclass(eq=False)
class ConsumeBatch:
    """Up to ``consume_message_batch_max_size`` messages of one partition.

    ``started_at`` (monotonic seconds) is written by the worker when the listener is
    called; ``expired`` by the poll thread when the consume timeout released the batch.
    """

    key: tuple[str, int]
    queue: MessageQueue
    pq: ProcessQueue
    messages: list[MessageExt]
    id: int = field(default_factory=lambda: next(_ids))
    started_at: float | None = None
    expired: bool = False


@dataclass(frozen=True)
class BatchResult:
    batch: ConsumeBatch
    status: ConsumeConcurrentlyStatus | None  # None: skipped (partition dropped or expired)
    context: ConsumeConcurrentlyContext


class WorkerPool:
    """``threads`` workers calling ``listener``; results are read with :meth:`results`.

    ``submit`` never blocks (the queue is unbounded; flow control bounds what is fetched).
    """

    def __init__(
        self, listener: ListenerFn, group: str, threads: int, clock: Callable[[], float]
    ) -> None:
        self._listener = listener
        self._clock = clock
        self._group = group
        self._threads = threads
        self._executor = ThreadPoolExecutor(threads, thread_name_prefix=f"consume-{group}")
        self._results: queue.SimpleQueue[BatchResult] = queue.SimpleQueue()

    def submit(self, batches: Sequence[ConsumeBatch]) -> None:
        """Run ``batches`` on at most ``threads`` tasks, striped so work goes in offset order.

        Task k takes batches k, k + threads, ...: the pool's per-task cost is paid once per
        fetch, and the smallest in-flight offset (the commit) advances as workers progress.
        """
        tasks = min(self._threads, len(batches))
        for k in range(tasks):
            self._executor.submit(self._run, batches[k::tasks])

    def _run(self, batches: Sequence[ConsumeBatch]) -> None:
        for batch in batches:
            context = ConsumeConcurrentlyContext(batch.queue)
            if batch.pq.dropped or batch.expired:
                self._results.put(BatchResult(batch, None, context))
                continue
            batch.started_at = self._clock()
            status = invoke(self._listener, self._group, batch.messages, context)
            self._results.put(BatchResult(batch, status, context))

    def results(self, timeout: float = 0.0) -> list[BatchResult]:
        """Every result available now (waiting up to ``timeout`` for the first)."""
        out: list[BatchResult] = []
        try:
            out.append(
                self._results.get(timeout=timeout) if timeout else self._results.get_nowait()
            )
            while True:
                out.append(self._results.get_nowait())
        except queue.Empty:
            return out

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
