"""Per-partition state of a push consumer: process queue, pause flag, committed offset."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from confluent_kafka import Consumer, TopicPartition

from rmqcompat.consumer.flow_control import over_threshold
from rmqcompat.consumer.settings import ConsumerSettings
from rmqcompat.message import MessageQueue
from rmqcompat.process_queue import ProcessQueue, new_process_queue
from rmqcompat.wire import Key

_log = logging.getLogger("rmqcompat.consumer")

#: Persists ``{(kafka topic, partition): next offset}``; ``asynchronous`` may be ignored.
OffsetWriter = Callable[[dict[Key, int], bool], None]


@dataclass
class PartitionState:
    queue: MessageQueue
    pq: ProcessQueue = field(default_factory=new_process_queue)
    paused: bool = False
    committed: int = -1
    expect: int = -1  # where the first fetched record should be; -1: checked or unknown
    # offset -> (message id, cause) of a message neither sent back nor dead-lettered
    stuck: dict[int, tuple[str, str]] = field(default_factory=dict)
    max_count: int = 0  # high-water mark of in-flight messages, for stats and tests
    pauses: int = 0
    # RocketMQ's consumeOKTPS / consumeFailedTPS and TIME_OUT consume results, as counts
    consume_ok: int = 0
    consume_failed: int = 0
    consume_timeouts: int = 0

    def stuck_now(self) -> list[tuple[str, str]]:
        """``stuck`` entries still in flight (one consumed successfully since is gone)."""
        pq = self.pq
        return [entry for offset, entry in list(self.stuck.items()) if offset in pq]


class Partitions:
    """The assigned partitions; owned by the poll thread (rebalance callbacks run there too).

    ``commit`` writes every offset that moved forward (a synchronous commit writes them
    all again, covering a lost asynchronous one); a failing writer is logged and retried
    at the next commit (offsets only lag, no message is skipped).
    """

    def __init__(
        self, settings: ConsumerSettings, writer: OffsetWriter, orderly: bool = False
    ) -> None:
        self._settings = settings
        self._writer = writer
        self._orderly = orderly  # flow control: the span rule is for concurrent consumers
        self._states: dict[Key, PartitionState] = {}

    def get(self, key: Key) -> PartitionState | None:
        return self._states.get(key)

    def keys(self) -> list[Key]:
        return list(self._states)

    def add(self, key: Key, queue: MessageQueue, start: int, durable: bool = True) -> None:
        """Track ``key`` from ``start`` (< 0: unknown); ``durable``: ``start`` is stored."""
        state = PartitionState(queue)
        if start >= 0:
            state.pq.start_at(start)
            state.expect = start
            state.committed = start if durable else -1
        self._states[key] = state

    def persist_starts(self) -> None:
        """Write the start of every partition whose start is not stored yet (synchronously)."""
        fresh = [k for k, s in self._states.items() if s.committed < 0 and s.expect >= 0]
        if fresh:
            self._write(fresh, asynchronous=False)

    def first_fetched(self, key: Key, state: PartitionState, offset: int) -> None:
        """Check the first record fetched against the start; a difference is a reset."""
        expected, state.expect = state.expect, -1
        if offset == expected:
            return
        if offset < expected:  # the start was beyond the end (topic re-created, data lost)
            state.pq.rebase(offset)
            state.committed = -1
        _log.warning(
            "%s[%d]: started at offset %d but the first record is at %d: the position was "
            "out of range and reset to the earliest record (or records were compacted away)",
            key[0],
            key[1],
            expected,
            offset,
        )

    def drop(self, keys: Iterable[Key], commit: bool) -> None:
        """Forget ``keys`` (revoked or lost); commit their offsets first when ``commit``."""
        keys = [k for k in keys if k in self._states]
        if commit:
            self._write(keys, asynchronous=False)
        for key in keys:
            self._states.pop(key).pq.dropped = True

    def check_pause(self, key: Key, consumer: Consumer) -> None:
        state = self._states[key]
        state.max_count = max(state.max_count, state.pq.count)
        reason = None if state.paused else over_threshold(state.pq, self._settings, self._orderly)
        if reason:
            _log.debug("flow control: pausing %s[%d]: %s", key[0], key[1], reason)
            consumer.pause([TopicPartition(*key)])
            state.paused = True
            state.pauses += 1

    def resume_ready(self, consumer: Consumer) -> None:
        ready = [
            k
            for k, s in self._states.items()
            if s.paused and not over_threshold(s.pq, self._settings, self._orderly)
        ]
        if ready:
            consumer.resume([TopicPartition(*key) for key in ready])
            for key in ready:
                self._states[key].paused = False

    def pause_all(self, consumer: Consumer) -> None:
        if self._states:
            consumer.pause([TopicPartition(*key) for key in self._states])
        for state in self._states.values():
            state.paused = True

    def commit(self, asynchronous: bool) -> None:
        self._write(list(self._states), asynchronous)

    def _write(self, keys: list[Key], asynchronous: bool) -> None:
        moved: dict[Key, int] = {}
        for key in keys:
            state = self._states[key]
            offset = state.pq.commit_offset()
            if offset is not None and (offset > state.committed or not asynchronous):
                moved[key] = offset
        if not moved:
            return
        try:
            self._writer(moved, asynchronous)
        except Exception:
            _log.exception("could not persist offsets %s; retrying at the next commit", moved)
            return
        for key, offset in moved.items():
            self._states[key].committed = offset

    def mark_stuck(self, key: Key, pq: ProcessQueue, offset: int, msg_id: str, cause: str) -> None:
        """List the message at ``offset`` as stuck, unless ``pq`` is no longer ``key``'s."""
        state = self._states.get(key)
        if state is not None and state.pq is pq:
            state.stuck[offset] = (msg_id, cause)

    def unstick(self, key: Key, offset: int) -> None:
        state = self._states.get(key)
        if state is not None:
            state.stuck.pop(offset, None)

    def stuck(self) -> dict[str, str]:
        """Message id -> cause of every stuck message (safe to call from any thread)."""
        out: dict[str, str] = {}
        for state in list(self._states.values()):
            out.update(state.stuck_now())
        return out

    def stats(self) -> dict[Key, dict[str, int | bool]]:
        """In-flight count, bytes, span, pause state, committed offset, stuck messages (in
        flight, neither sent back nor dead-lettered: see the error log) and consume results
        (messages ok and failed by ackIndex; listener calls that took ``consume_timeout``
        or longer, RocketMQ's TIME_OUT) per partition, since it was assigned."""
        return {
            key: {
                "count": s.pq.count,
                "size_bytes": s.pq.size_bytes,
                "span": s.pq.span,
                "paused": s.paused,
                "pauses": s.pauses,
                "max_count": s.max_count,
                "committed": s.committed,
                "stuck": len(s.stuck_now()),
                "consume_ok": s.consume_ok,
                "consume_failed": s.consume_failed,
                "consume_timeouts": s.consume_timeouts,
            }
            for key, s in self._states.items()
        }
