"""Each thread's CPU time over a measurement, summed by role: which thread a rate is bound
by. The two threads that take turns on the GIL (at batch size 1 the poll thread and the
listener's) set the rate together; at batch 32 the poll thread alone. Linux only (each
thread's nanoseconds on a CPU from ``/proc/self/task/*/schedstat``, which unlike the
10 ms ticks of ``stat`` counts the many short-lived turns of idle listener threads);
elsewhere it reports nothing."""

from __future__ import annotations

import threading
from pathlib import Path

_TASKS = Path("/proc/self/task")
#: Thread name prefixes and the role they are summed under; other threads: "other".
_ROLES = (
    ("rmqcompat-poll", "poll"),
    ("consume-", "listeners"),
    ("rmqcompat-trace", "trace"),
    ("rdk:", "librdkafka"),
    ("MainThread", "main"),  # the raw loops read on it
)


class ThreadClock:
    """CPU seconds of each role's threads between :meth:`start` and :meth:`stop`; a thread
    that ends in between is missed, so stop before the client shuts down."""

    def __init__(self) -> None:
        self._began: dict[str, tuple[str, int]] = {}
        self.seconds: dict[str, float] = {}

    def start(self) -> None:
        self._began = _on_cpu_ns()

    def stop(self) -> None:
        seconds: dict[str, float] = {}
        for tid, (role, ns) in _on_cpu_ns().items():
            ran = (ns - self._began.get(tid, (role, 0))[1]) / 1e9
            seconds[role] = seconds.get(role, 0.0) + ran
        self.seconds = seconds

    def per_message_us(self, count: int) -> str:
        """``poll 1.8, listeners 0.6, ...`` (us a message), busiest first; empty where
        nothing was read."""
        by_time = sorted(self.seconds.items(), key=lambda item: -item[1])
        each = [(role, s / count * 1e6) for role, s in by_time]
        return ", ".join(f"{role} {us:.2f}" for role, us in each if us >= 0.005)


def _on_cpu_ns() -> dict[str, tuple[str, int]]:
    """Thread id -> (role, nanoseconds on a CPU so far)."""
    if not _TASKS.is_dir():
        return {}
    names = {str(t.native_id): t.name for t in threading.enumerate()}
    out = {}
    for task in _TASKS.iterdir():
        stats = schedstat_ns(task.name)
        try:
            name = names.get(task.name) or (task / "comm").read_text().strip()
        except OSError:  # the thread ended meanwhile
            continue
        if stats is not None:
            out[task.name] = (_role(name), stats[0])
    return out


def schedstat_ns(tid: int | str) -> tuple[int, int] | None:
    """Thread ``tid``'s (nanoseconds on a CPU, nanoseconds ready but waiting for one);
    None where Linux's schedstat is missing or the thread ended."""
    try:
        fields = (_TASKS / str(tid) / "schedstat").read_text().split()
        return int(fields[0]), int(fields[1])
    except (OSError, IndexError, ValueError):
        return None


def _role(name: str) -> str:
    return next((role for prefix, role in _ROLES if name.startswith(prefix)), "other")
