"""The wall clock every time-based rule takes as an injectable argument."""

from __future__ import annotations

import time
from collections.abc import Callable

#: Returns the wall-clock time in epoch milliseconds.
Clock = Callable[[], int]


def epoch_ms() -> int:
    return time.time_ns() // 1_000_000
