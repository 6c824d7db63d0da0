"""A single worker thread that runs jobs at a due time (retries after backoff, spooling).

Jobs never run on librdkafka's delivery-report thread, so a re-produce that waits for
queue space, or a spool write that fsyncs, cannot stall delivery reports.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable

from rmqcompat.core import BUG_ERRORS

log = logging.getLogger(__name__)

Job = Callable[[], None]


class Scheduler:
    """Runs ``call_later`` jobs in due order on one daemon thread.

    ``stop()`` runs every job already scheduled (at its due time) before returning, so no
    retry or spool write that was promised is dropped.
    """

    def __init__(self, name: str, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._jobs: list[tuple[float, int, Job]] = []
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def call_later(self, delay_s: float, job: Job) -> None:
        with self._cond:
            heapq.heappush(self._jobs, (self._clock() + max(0.0, delay_s), next(self._seq), job))
            self._cond.notify()

    def stop(self) -> None:
        """Block until every scheduled job has run, then end the thread."""
        with self._cond:
            self._stopping = True
            self._cond.notify()
        if self._thread.is_alive():
            self._thread.join()

    def _next_job(self) -> Job | None:
        with self._cond:
            while True:
                if not self._jobs:
                    if self._stopping:
                        return None
                    self._cond.wait()
                    continue
                due = self._jobs[0][0] - self._clock()
                if due <= 0:
                    return heapq.heappop(self._jobs)[2]
                self._cond.wait(due)

    def _run(self) -> None:
        while (job := self._next_job()) is not None:
            try:
                job()
            except BUG_ERRORS:  # a job's failure must not kill the thread serving the others
                log.exception("producer background job failed")
