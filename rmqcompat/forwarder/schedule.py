"""When a parked record is due and when a paused partition wakes up (pure, clock injected).

Mirrors RocketMQ's ``ScheduleMessageService``: a level queue is ordered by due time, so
only its head is examined. RocketMQ treats a head due further ahead than ``now + that
level's delay`` as due now (``correctDeliverTimestamp``): with one clock (the broker's)
that can only mean the clock jumped. Here the due time comes from another host's clock
(the broker's append time, or the parker's ``DUE_TIME``), so ordinary skew between two
hosts would trigger the rule and turn a delay into zero (a parker 150 ms ahead made a
3 s level immediate). The correction is kept for real jumps only: beyond
:data:`CLOCK_JUMP_MS` of excess; smaller excesses are waited out (late, never early).

Instead of RocketMQ's 100 ms timer per level, the forwarder pauses a partition and asks
:class:`WakeSchedule` how long it may wait in ``consumer.poll`` before some partition's head
becomes due.
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)

#: How far beyond ``now + delay`` a due time must lie to count as a clock jump (then it is
#: due now). Smaller excesses are clock skew between hosts and are waited out, so a head
#: stamped by a wrong clock holds its partition at most this much longer than its delay.
CLOCK_JUMP_MS = 60_000


def corrected_due(due_ms: int, now_ms: int, level_delay_ms: int) -> int:
    """The due time to act on: ``now_ms`` if ``due_ms`` lies beyond ``now + delay`` by more
    than :data:`CLOCK_JUMP_MS` (a clock jump), else ``due_ms``."""
    return now_ms if due_ms > now_ms + level_delay_ms + CLOCK_JUMP_MS else due_ms


def lateness_s(due_ms: int, now_ms: int) -> float:
    """How late, in seconds, a record due at ``due_ms`` is forwarded at ``now_ms`` (0 when
    not late): what the lateness histogram observes."""
    return max(0, now_ms - due_ms) / 1000


def is_due(due_ms: int, now_ms: int) -> bool:
    """Whether a record due at ``due_ms`` may be delivered at ``now_ms`` (never early)."""
    return due_ms <= now_ms


class WakeSchedule(Generic[K]):
    """Wake-up times of paused partitions; one live entry per partition.

    ``wake(key, at_ms)`` replaces any earlier entry of ``key``; ``cancel`` drops it.
    Stale heap entries are skipped lazily, so every operation is O(log n).
    """

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, K]] = []
        self._live: dict[K, tuple[int, int]] = {}
        self._seq = 0

    def wake(self, key: K, at_ms: int) -> None:
        self._seq += 1
        self._live[key] = (at_ms, self._seq)
        heapq.heappush(self._heap, (at_ms, self._seq, key))

    def cancel(self, key: K) -> None:
        self._live.pop(key, None)

    def __contains__(self, key: object) -> bool:
        return key in self._live

    def __len__(self) -> int:
        return len(self._live)

    def pop_due(self, now_ms: int) -> list[K]:
        """Keys whose wake time is ``<= now_ms``, earliest first; they are removed."""
        out: list[K] = []
        while self._heap and self._heap[0][0] <= now_ms:
            at_ms, seq, key = heapq.heappop(self._heap)
            if self._live.get(key) == (at_ms, seq):
                del self._live[key]
                out.append(key)
        return out

    def next_wake_ms(self) -> int | None:
        while self._heap and self._live.get(self._heap[0][2]) != self._heap[0][:2]:
            heapq.heappop(self._heap)
        return self._heap[0][0] if self._heap else None

    def poll_timeout_s(self, now_ms: int, max_wait_s: float) -> float:
        """How long ``consumer.poll`` may block: until the next wake-up, at most ``max_wait_s``."""
        nxt = self.next_wake_ms()
        if nxt is None:
            return max_wait_s
        return min(max_wait_s, max(0.0, (nxt - now_ms) / 1000.0))
