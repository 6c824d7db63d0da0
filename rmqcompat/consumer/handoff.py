"""The one hand-off between the poll thread and the listener threads.

Both consume modes use it: the poll thread submits jobs (concurrent batches, orderly
batches); worker threads take them in submission order and append each finished job to
one results deque, which the poll thread reads; it waits for results on one event.
A worker that takes a job while more are queued keeps taking them, so small batches do
not pay a thread switch each.

Parking without a thundering herd: a worker that finds no work parks; a submitter wakes
one parked worker, and a worker that takes a job while more are queued wakes one more.
Only one woken worker is on its way at a time, so a fast listener is served by one or
two threads (no GIL ping-pong between twenty), while a slow one (I/O) quickly has every
thread busy.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable, Sized
from typing import Generic, TypeVar

from rmqcompat.core import BUG_ERRORS

_log = logging.getLogger("rmqcompat.consumer")

Job = TypeVar("Job")

_ANY = 2**62  # wake on any finished job, whatever the backlog


class Wakeups:
    """Park / wake bookkeeping of ``workers`` threads sharing one work deque.

    Never loses a wake-up: a worker parks only after seeing the work empty under the lock,
    and :meth:`offer` checks for parked workers under the same lock after work was added.
    """

    def __init__(self, workers: int) -> None:
        self._workers = workers
        self._lock = threading.Lock()
        self._signal: queue.SimpleQueue[bool] = queue.SimpleQueue()
        self._parked = 0  # blocked in park(), or about to block
        self._waking = 0  # woken, not yet looking at the work
        self._closed = False

    def offer(self, work: Sized) -> None:
        """Wake one parked worker if ``work`` is not empty and no woken peer is on its way."""
        with self._lock:
            if self._parked and not self._waking and len(work):
                self._parked -= 1
                self._waking += 1
                self._signal.put(True)

    def cascade(self, work: Sized) -> None:
        """:meth:`offer` from a running worker; the unlocked pre-check is safe because the
        caller itself comes back to ``work`` before it can park."""
        if self._parked and not self._waking:
            self.offer(work)

    def park(self, work: Sized) -> bool:
        """Block until woken while ``work`` is empty; False once closed (the worker exits)."""
        with self._lock:
            if self._closed:
                return False
            if len(work):
                return True
            self._parked += 1
        if not self._signal.get():
            return False
        with self._lock:
            self._waking -= 1
        return not self._closed

    def close(self) -> None:
        """Make every parked and running worker return False from :meth:`park`."""
        with self._lock:
            self._closed = True
        for _ in range(self._workers):
            self._signal.put(False)


class HandOff(Generic[Job]):
    """``threads`` daemon threads calling ``run(job)`` for every submitted job.

    ``run`` returns whether the job is reported by :meth:`results` (False: it did not
    run, e.g. cancelled). ``submit`` never blocks (the queue is unbounded; flow control
    bounds what is fetched). A stuck ``run`` holds one thread only. Idle workers block.
    """

    def __init__(self, run: Callable[[Job], bool], name: str, threads: int) -> None:
        self._run = run
        self._work: deque[Job] = deque()
        self._wakeups = Wakeups(threads)
        self._done: deque[Job] = deque()
        self._ready = threading.Event()
        # while the poll thread waits: a finished job leaving fewer queued than this wakes it
        self._wake_below = 0
        self._threads = [
            threading.Thread(target=self._loop, name=f"{name}-{i}", daemon=True)
            for i in range(threads)
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, jobs: Iterable[Job]) -> None:
        self._work.extend(jobs)
        self._wakeups.offer(self._work)

    def _loop(self) -> None:
        work, done, wakeups, run = self._work, self._done, self._wakeups, self._run
        while wakeups.park(work):
            while True:
                try:
                    job = work.popleft()
                except IndexError:
                    break
                if work:  # more waiting: a peer may start on it while this one runs
                    wakeups.cascade(work)
                try:
                    reported = run(job)
                except BUG_ERRORS:  # a bug: report the job, so its partition does not stall
                    _log.exception("listener thread: running %r failed", job)
                    reported = True
                if reported:
                    done.append(job)
                    if self._wake_below > len(work):
                        self._wake_below = 0  # one set() per wait, not one per job
                        self._ready.set()

    def backlog(self) -> int:
        """Jobs submitted and not yet taken by a worker."""
        return len(self._work)

    def wait(self, timeout: float, backlog_below: int | None = None) -> bool:
        """Block up to ``timeout`` until a job finished, or with ``backlog_below``, until
        a job finished leaving fewer than that many queued. False: timed out."""
        below = backlog_below if backlog_below is not None else _ANY
        self._ready.clear()
        self._wake_below = below
        # re-checked after announcing the wait, so a worker finishing meanwhile is seen
        ready = self._done if backlog_below is None else len(self._work) < below
        woken = bool(ready) or self._ready.wait(timeout)
        self._wake_below = 0
        return woken

    def results(self) -> list[Job]:
        """Every finished job available now, in the order they finished."""
        done = self._done
        out = []
        while done:
            out.append(done.popleft())
        return out

    def withdraw(self) -> list[Job]:
        """Take back every job no worker took yet: they never run and are not reported."""
        work, left = self._work, []
        while True:
            try:
                left.append(work.popleft())
            except IndexError:
                return left

    def shutdown(self) -> None:
        """Stop the workers once their current job returns (does not wait); jobs no
        worker took never run."""
        self.withdraw()
        self._wakeups.close()
