"""How every test waits for something to happen: a deadline for a test that would otherwise
hang when it fails, never a timing assertion (speed is measured in benchmarks/)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from rmqcompat.consumer.handoff import HandOff

Job = TypeVar("Job")

#: How long a test waits by default before it fails.
WAIT_S = 60.0


def wait_until(predicate: Callable[[], bool], timeout: float = WAIT_S, what: str = "") -> None:
    """Return once ``predicate()`` is true; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what or predicate}")
        time.sleep(0.05)


def collect_finished(handoff: HandOff[Job], count: int, timeout: float = 5.0) -> list[Job]:
    """The jobs ``handoff`` reports, until ``count`` of them or ``timeout`` seconds."""
    out: list[Job] = []
    deadline = time.monotonic() + timeout
    while len(out) < count and time.monotonic() < deadline:
        handoff.wait(0.05)
        out += handoff.results()
    return out
