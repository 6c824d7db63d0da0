"""Actions to run later on the poll thread, without threads of their own (pure bookkeeping)."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable


class Timers:
    """A heap of ``(due, action)``; :meth:`run_due` runs what is due, earliest first.

    Owned by the poll thread, which calls :meth:`run_due` on every round.
    """

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._heap: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = itertools.count()  # ties run in the order they were scheduled

    def later(self, action: Callable[[], None], delay_s: float) -> None:
        """Run ``action`` once ``delay_s`` seconds have passed."""
        heapq.heappush(self._heap, (self._clock() + delay_s, next(self._seq), action))

    def run_due(self, now: float) -> None:
        while self._heap and self._heap[0][0] <= now:
            heapq.heappop(self._heap)[2]()
