"""Delivery attempts that outlive a SimpleConsumer process (pure bookkeeping).

RocketMQ counts a delivery whose invisible time ran out, even when the consumer that
held it died: the message comes back with ``delivery_attempt`` + 1, and past the group's
max attempts it goes to ``%DLQ%<group>``. A Kafka consumer that dies never committed past
what it held, so the partition's next owner reads those records again, knowing nothing
of the lost attempt. So each member of a SimpleConsumer group keeps a *snapshot*
(:class:`Held`) of what it handed out and has not settled: which record (partition,
offset) at which attempt. ``receive`` writes it to the group's attempt log before it
returns (:mod:`rmqcompat.v5.attempt_log`), one record per member, the latest wins.

The next owner of a partition reads the log (:class:`AttemptBook`) when it is assigned
the partition and gives each record it reads again the highest attempt any other member
handed it out with, plus one (:func:`restore`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping

from rmqcompat.message import MessageExt
from rmqcompat.wire import Key

#: One handed-out record: its partition (Kafka topic, partition), offset and the
#: ``delivery_attempt`` it was handed out with.
Entry = tuple[Key, int, int]


def encode(entries: Iterable[Entry]) -> bytes:
    """A snapshot's record value: ``[[topic, partition, offset, attempt], ...]``."""
    return json.dumps([[k[0], k[1], offset, attempt] for k, offset, attempt in entries]).encode()


def decode(value: bytes) -> list[Entry]:
    """The entries of a snapshot record.

    Raises:
        ValueError: the value is not a snapshot (names what is wrong).
    """
    try:
        rows = json.loads(value)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"attempt snapshot is not JSON: {exc}") from exc
    if not isinstance(rows, list):
        raise ValueError("attempt snapshot is not a list")
    out: list[Entry] = []
    for row in rows:
        if (
            not isinstance(row, list)
            or len(row) != 4
            or not isinstance(row[0], str)
            or not all(type(n) is int and n >= 0 for n in row[1:])
        ):
            raise ValueError(f"attempt entry {row!r} is not [topic, partition, offset, attempt]")
        out.append(((row[0], row[1]), row[2], row[3]))
    return out


class Held:
    """This member's handed-out, unsettled records, by lease id (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[int, Entry] = {}

    def add(self, handed: Mapping[int, Entry]) -> bytes:
        """Record ``handed`` (lease id -> entry); the snapshot to write."""
        with self._lock:
            self._entries.update(handed)
            return encode(self._entries.values())

    def settle(self, lease_id: int) -> bytes:
        """The lease ended (acked or given back): the snapshot without its record."""
        with self._lock:
            self._entries.pop(lease_id, None)
            return encode(self._entries.values())


class AttemptBook:
    """The latest snapshot of every other member, as read from the attempt log."""

    def __init__(self, own: str) -> None:
        self._own = own
        self._snapshots: dict[str, list[Entry]] = {}

    def apply(self, member: str, value: bytes | None) -> None:
        """A log record: ``member``'s snapshot, or its tombstone (``None``: it left cleanly).

        Raises:
            ValueError: the value is not a snapshot (the member's older one is kept).
        """
        if member == self._own:
            return
        if value is None:
            self._snapshots.pop(member, None)
        else:
            self._snapshots[member] = decode(value)

    def attempts(self, key: Key) -> dict[int, int]:
        """Offset -> the highest attempt another member handed out, in partition ``key``."""
        out: dict[int, int] = {}
        for entries in self._snapshots.values():
            for entry_key, offset, attempt in entries:
                if entry_key == key and attempt > out.get(offset, 0):
                    out[offset] = attempt
        return out


def restore(msgs: Iterable[MessageExt], handed: Mapping[int, int]) -> None:
    """Count the attempts of ``msgs`` that ``handed`` (offset -> attempt) lists as lost:
    such a message is delivered next with that attempt + 1."""
    for msg in msgs:
        attempt = handed.get(msg.queue_offset, 0)
        if attempt > msg.reconsume_times:
            msg.reconsume_times = attempt
