"""The records of a partition the forwarder holds in memory, and when to pause it (pure).

Holding the records after a not-yet-due head means they are already here when it falls
due, with no fetch round trip per wake-up: that keeps lateness low at thousands of
records per second. Memory is bounded per partition by two caps, like RocketMQ's
``pull_threshold_for_queue`` (records) and ``pull_threshold_size_for_queue`` (100 MiB):
a record cap alone would allow 10,000 x 4 MiB bodies. A partition is *full* once either
cap is reached; the loop then admits no more of its records, pauses it and moves its
fetch position back to the first record not held. It resumes once forwarding has brought
*both* counts down to half their cap (hysteresis): resuming any earlier restarts the
fetch (seek + round trip) once per forwarded record.

Sizes: the record cap is 10,000 because 1,000 was below rate x delay of ordinary traffic
(1s level at 1,250 msg/s per partition), and the pause/seek/refetch churn that followed
made forwarder p99 lateness 150-700 ms at 5k msg/s instead of 20-60 ms
(benchmarks/forwarder.py, 2 CPUs).
The byte cap of 64 MiB stays below RocketMQ's 100 MiB per queue; a forwarder's worst case
is assigned level partitions x 64 MiB. An empty partition always admits its next record,
so one record larger than the byte cap still makes progress.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rmqcompat.core import CORE
from rmqcompat.errors import ConfigError
from rmqcompat.process_queue import ProcessQueue
from rmqcompat.properties import Headers
from rmqcompat.wire import FetchedRecord, KafkaRecord, run_offset

#: Records of one partition held before it is paused (size it to rate x delay).
DEFAULT_MAX_HELD = 10_000
#: Bytes (values + keys + headers) of one partition held before it is paused.
DEFAULT_MAX_HELD_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class HoldLimits:
    """The per-partition caps. Raises ConfigError when either is below 1."""

    max_records: int = DEFAULT_MAX_HELD
    max_bytes: int = DEFAULT_MAX_HELD_BYTES

    def __post_init__(self) -> None:
        if self.max_records < 1:
            raise ConfigError(f"max_held_per_partition must be >= 1, not {self.max_records}")
        if self.max_bytes < 1:
            raise ConfigError(f"max_held_bytes_per_partition must be >= 1, not {self.max_bytes}")

    def full(self, records: int, size: int) -> bool:
        """True when no further record may be held (and the partition must be paused)."""
        return records > 0 and (records >= self.max_records or size >= self.max_bytes)

    def may_resume(self, records: int, size: int) -> bool:
        return records <= self.max_records // 2 and size <= self.max_bytes // 2


def record_size(msg: KafkaRecord, headers: Headers | None) -> int:
    """Bytes ``msg`` holds that its sender chose: value, key, header names and values
    (``headers``: ``msg.headers()``, read once by the caller)."""
    size = len(msg.value() or b"") + len(msg.key() or b"")
    for name, value in headers or ():
        size += len(name) + len(value or b"")
    return size


_record_size = record_size if CORE is None else CORE.record_size

#: A held record: the consumed record, its headers (read once) and its size.
Held = tuple[KafkaRecord, Headers | None, int]


def hold_run(
    records: deque[Held],
    messages: Sequence[FetchedRecord],
    start: int,
    where: tuple[str, int],
    state: ProcessQueue,
    limits: HoldLimits,
    size: int,
) -> tuple[int, int, bool]:
    """Hold the records of one partition from ``messages[start]`` on, in one call.

    ``where`` is their (topic, partition), ``state`` its process queue, ``limits`` its
    caps and ``size`` the bytes held now. It goes on while the next message is a record
    of that partition (:func:`rmqcompat.wire.run_offset`): a record read before (a re-read
    after a seek back) is skipped, any other is tracked in ``state`` and held.
    It stops before a record that finds the partition full (:meth:`HoldLimits.full`),
    which is not held. Returns the index it stopped at, the bytes held then and whether
    it stopped for a full partition. The pure-Python reference of the core's
    ``hold_run`` (``tests/unit/forwarder/test_forwarder_holding.py`` runs both).
    """
    topic, partition = where
    end = len(messages)
    while start < end:
        msg = messages[start]
        offset = run_offset(msg, topic, partition)
        if offset is None:
            break
        if limits.full(len(records), size):
            return start, size, True
        if state.track_new(offset):
            headers = msg.headers()
            record = _record_size(msg, headers)
            records.append((msg, headers, record))
            size += record
        start += 1
    return start, size, False


_hold_run = hold_run if CORE is None else CORE.hold_run


class HeldRecords:
    """One partition's records read but not yet forwarded, in read order, and their size.

    Each record is held with its headers: confluent builds a new list of new tuples on
    every ``headers()`` call (about as costly as the rest of the intake), so they are
    read once here and handed to the planner with the record.

    Not thread-safe: the poll thread owns it.
    """

    def __init__(self, limits: HoldLimits) -> None:
        self._limits = limits
        self._records: deque[Held] = deque()
        self.size = 0

    def __len__(self) -> int:
        return len(self._records)

    @property
    def full(self) -> bool:
        return self._limits.full(len(self._records), self.size)

    @property
    def may_resume(self) -> bool:
        return self._limits.may_resume(len(self._records), self.size)

    def hold_run(
        self,
        messages: Sequence[FetchedRecord],
        start: int,
        where: tuple[str, int],
        state: ProcessQueue,
    ) -> tuple[int, bool]:
        """:func:`hold_run` on these records: the index it stopped at, and whether the
        partition is full."""
        end, self.size, full = _hold_run(
            self._records, messages, start, where, state, self._limits, self.size
        )
        return end, full

    def head(self) -> tuple[KafkaRecord, Headers | None]:
        """The oldest record held and its headers."""
        msg, headers, _ = self._records[0]
        return msg, headers

    def take_run(self, run: Callable[..., tuple[int, int]], *args: object) -> int:
        """Let ``run`` take records off the head (:func:`rmqcompat.forwarder.run.forward_run`
        with ``args``); it returns how many it took and their size."""
        count, size = run(self._records, *args)
        self.size -= size
        return count

    def popleft(self) -> None:
        _, _, size = self._records.popleft()
        self.size -= size
