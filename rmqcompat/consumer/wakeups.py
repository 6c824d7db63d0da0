"""Parking and waking idle workers without a thundering herd.

A worker that finds no work parks; a submitter wakes one parked worker, and a worker
that takes a batch while more are queued wakes one more. Only one woken worker is on its
way at a time, so a fast listener is served by one or two threads (no GIL ping-pong
between twenty), while a slow one (I/O) quickly has every thread busy.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Sized


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
