"""In-flight bookkeeping of one partition (RocketMQ's ``ProcessQueue``), pure and clock-free.

The one committed-offset rule of the push consumer and the delay-forwarder alike.
Offsets enter when fetched and leave when done (acked, sent back, filtered, quarantined,
forwarded). Kafka offsets may have gaps (transaction markers, compaction), so the
position is never computed as "offset + 1" of a finished record.
The offset to commit is the smallest offset still in flight, or, with none in flight,
the highest offset seen + 1; it never moves backwards. Message count, byte size and the
span between the first and last in-flight offsets drive flow control.
"""

from __future__ import annotations

import bisect
from collections import deque
from dataclasses import dataclass, field

from rmqcompat.core import CORE


@dataclass
class ProcessQueue:
    """In-flight offsets of one partition; not thread-safe (the poll thread owns it).

    ``dropped`` is set when the partition is revoked: later results for it are ignored.
    Every operation is O(1) amortised: a partition is fetched in offset order, so
    ``_order`` is appended to and stays sorted; removed offsets are dropped lazily from
    either end when the first or last in-flight offset is asked for.
    """

    _sizes: dict[int, int] = field(default_factory=dict)
    _order: deque[int] = field(default_factory=deque)
    _highest_seen: int = -1
    _floor: int = -1
    size_bytes: int = 0
    dropped: bool = False

    def add(self, offset: int, size: int) -> None:
        """Track ``offset`` as in flight (a re-added offset is counted once)."""
        if offset > self._highest_seen:
            self._highest_seen = offset
        if offset in self._sizes:
            return
        self._sizes[offset] = size
        self.size_bytes += size
        order = self._order
        if not order or offset > order[-1]:
            order.append(offset)
        else:  # out of order (rare: a stale record fetched again): keep _order sorted
            order.insert(bisect.bisect_left(order, offset), offset)

    def track_new(self, offset: int, size: int = 0) -> bool:
        """:meth:`add` ``offset`` unless it was fetched before (read again after a seek
        back): False for such a re-read, which is already tracked or done."""
        if offset <= self._highest_seen:
            return False
        self.add(offset, size)
        return True

    @property
    def highest_seen(self) -> int:
        """The highest offset fetched so far; -1 before the first."""
        return self._highest_seen

    def seen(self, offset: int) -> None:
        """Record that ``offset`` was fetched without tracking it (e.g. filtered by tag)."""
        if offset > self._highest_seen:
            self._highest_seen = offset

    def remove(self, offset: int) -> None:
        """``offset`` is done; unknown offsets are ignored (e.g. released twice)."""
        size = self._sizes.pop(offset, None)
        if size is not None:
            self.size_bytes -= size

    def remove_all(self, offsets: list[int]) -> None:
        """:meth:`remove` for each of ``offsets`` (the settle fast path: one call per batch)."""
        pop = self._sizes.pop
        freed = 0
        for offset in offsets:
            freed += pop(offset, 0)  # unknown: 0 bytes
        self.size_bytes -= freed

    def __contains__(self, offset: int) -> bool:
        return offset in self._sizes

    @property
    def count(self) -> int:
        return len(self._sizes)

    def first(self) -> int | None:
        """Smallest in-flight offset, or None."""
        order, sizes = self._order, self._sizes
        while order and order[0] not in sizes:
            order.popleft()
        return order[0] if order else None

    def last(self) -> int | None:
        """Largest in-flight offset, or None."""
        order, sizes = self._order, self._sizes
        while order and order[-1] not in sizes:
            order.pop()
        return order[-1] if order else None

    @property
    def span(self) -> int:
        """Last minus first in-flight offset (RocketMQ's ``getMaxSpan``); 0 when empty."""
        first = self.first()
        return 0 if first is None else self.last() - first  # type: ignore[operator]

    def commit_offset(self) -> int | None:
        """The next offset to consume after a restart; None while neither a start nor a
        record is known (before the first record, the start itself is the answer)."""
        if self._floor < 0 and self._highest_seen < 0:
            return None
        first = self.first()
        candidate = first if first is not None else self._highest_seen + 1
        self._floor = max(self._floor, candidate)
        return self._floor

    def start_at(self, offset: int) -> None:
        """The partition starts at ``offset`` (its start position): offsets never go below."""
        self._floor = max(self._floor, offset)

    def rebase(self, offset: int) -> None:
        """The broker moved the position back to ``offset`` (an offset reset): the start
        was never consumable, so the floor follows it down (the only move backwards)."""
        self._floor = offset


#: Makes each partition's in-flight bookkeeping: the compiled ``ProcessQueue`` where the core
#: is built (an insert and a release cost a C call instead of two Python ones).
new_process_queue: type[ProcessQueue] = ProcessQueue if CORE is None else CORE.ProcessQueue
