"""How every test waits for something to happen: a deadline for a test that would otherwise
hang when it fails, never a timing assertion (speed is measured in benchmarks/)."""

from __future__ import annotations

import time
from collections.abc import Callable

#: How long a test waits by default before it fails.
WAIT_S = 60.0


def wait_until(predicate: Callable[[], bool], timeout: float = WAIT_S, what: str = "") -> None:
    """Return once ``predicate()`` is true; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what or predicate}")
        time.sleep(0.05)
