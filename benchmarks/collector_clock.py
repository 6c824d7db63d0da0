"""How long Python's cyclic garbage collector ran: a benchmark's CPU per message includes
it, and the SDK's per-message objects (a message, a future, a process-queue entry) are what
it walks, where the raw client keeps none alive."""

from __future__ import annotations

import gc
import time


class CollectorClock:
    """Seconds the cyclic garbage collector ran in this process between :meth:`start` and
    :meth:`stop` (timed by ``gc.callbacks``, on whichever thread triggered it)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._began = 0.0

    def start(self) -> None:
        gc.callbacks.append(self._callback)

    def stop(self) -> None:
        if self._callback in gc.callbacks:
            gc.callbacks.remove(self._callback)

    def _callback(self, phase: str, _info: dict[str, int]) -> None:
        if phase == "start":
            self._began = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._began
