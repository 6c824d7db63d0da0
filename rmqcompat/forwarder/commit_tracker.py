"""Which offset of a partition may be committed: the end of its delivered prefix (pure).

Records are tracked in the order they were read. A record is finished when its forward
(or quarantine) produce was acknowledged. Kafka offsets may have gaps (transaction
markers, compaction), so "contiguous" means "every earlier tracked record finished",
not "offset + 1": the commit position is the offset of the oldest unfinished record, or
the last tracked offset + 1 when all are finished. It never moves backwards.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)


class PartitionOffsets:
    """Bookkeeping of one partition. Not thread-safe: the poll thread owns it."""

    def __init__(self) -> None:
        self._order: deque[int] = deque()
        self._finished: set[int] = set()
        self._position: int | None = None
        self._committed: int | None = None
        self.last_tracked: int | None = None

    def track(self, offset: int) -> bool:
        """Start tracking a record read at ``offset``; False if already seen (a re-read)."""
        if self.last_tracked is not None and offset <= self.last_tracked:
            return False
        self._order.append(offset)
        self.last_tracked = offset
        return True

    def finish(self, offset: int) -> None:
        """Mark ``offset`` finished (its produce was acknowledged)."""
        self._finished.add(offset)
        while self._order and self._order[0] in self._finished:
            head = self._order.popleft()
            self._finished.discard(head)
            self._position = head + 1

    @property
    def pending(self) -> int:
        return len(self._order)

    def uncommitted_position(self) -> int | None:
        """The position to commit if it moved since :meth:`committed`; else None."""
        if self._position is None or self._position == self._committed:
            return None
        return self._position

    def committed(self, position: int) -> None:
        self._committed = position if self._committed is None else max(position, self._committed)


class CommitTracker(Generic[K]):
    """:class:`PartitionOffsets` per assigned partition, keyed by any hashable key."""

    def __init__(self) -> None:
        self.partitions: dict[K, PartitionOffsets] = {}

    def assign(self, key: K) -> PartitionOffsets:
        state = self.partitions[key] = PartitionOffsets()
        return state

    def drop(self, key: K) -> None:
        self.partitions.pop(key, None)

    def to_commit(self) -> dict[K, int]:
        """Positions that moved since they were last committed."""
        out: dict[K, int] = {}
        for key, state in self.partitions.items():
            position = state.uncommitted_position()
            if position is not None:
                out[key] = position
        return out
