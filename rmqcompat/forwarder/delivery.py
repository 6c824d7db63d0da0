"""Producing planned records and acting on their delivery reports.

A record's source offset is marked finished (so it may be committed) only in its
successful delivery report. A failed report puts the record on a retry queue: it is
produced again after ``retry_backoff_ms`` and holds the partition's commit position
meanwhile, unless the partition was revoked in between (then the new owner forwards it).

Per record this is the hot path, so the delivery callback is a ``functools.partial`` of
one bound method over (lane, offset, record, kind), with no per-record object of our own,
and counts go to a :class:`~rmqcompat.forwarder.metrics.Tally`.
"""

from __future__ import annotations

import functools
import logging
from collections import deque
from dataclasses import dataclass
from typing import Any

from confluent_kafka import KafkaError, Producer

from rmqcompat.forwarder.commit_tracker import PartitionOffsets
from rmqcompat.forwarder.metrics import ForwarderMetrics, Tally
from rmqcompat.forwarder.schedule import Clock
from rmqcompat.wire import OutgoingRecord

log = logging.getLogger(__name__)

Key = tuple[str, int]


@dataclass(frozen=True, slots=True)
class Lane:
    """One tenure of one assigned partition: a re-assignment gets a new lane (and state)."""

    key: Key
    state: PartitionOffsets
    label: str


_Retry = tuple[int, Lane, int, OutgoingRecord, str]


class Deliveries:
    """Owns the producer; not thread-safe (the poll thread calls everything).

    ``kind`` is the metrics counter a successful delivery increments: ``forwarded``,
    ``hops`` or ``quarantined``.
    """

    def __init__(
        self, producer: Producer, metrics: ForwarderMetrics, clock: Clock, retry_backoff_ms: int
    ) -> None:
        self._producer = producer
        self._metrics = metrics
        self._clock = clock
        self._backoff_ms = retry_backoff_ms
        self._retries: deque[_Retry] = deque()
        self.tally = Tally(metrics)
        self.fatal: KafkaError | None = None

    def send(self, lane: Lane, offset: int, record: OutgoingRecord, kind: str) -> None:
        callback = functools.partial(self._on_delivery, lane, offset, record, kind)
        while True:
            try:
                self._producer.produce(
                    record.topic, record.value, record.key, headers=record.headers,
                    on_delivery=callback,
                )  # fmt: skip
                return
            except BufferError:
                # The local queue is full: serve delivery reports until there is room.
                self._producer.poll(0.1)

    def _on_delivery(
        self, lane: Lane, offset: int, record: OutgoingRecord, kind: str, err: Any, _msg: Any
    ) -> None:
        if err is None:
            lane.state.finish(offset)
            self.tally.add(kind, lane.label)
            return
        self._metrics.produce_failures.inc()
        log.warning("forwarding %s[%s]@%s failed: %s", *lane.key, offset, err)
        if err.fatal():
            self.fatal = err
        self._retries.append((self._clock() + self._backoff_ms, lane, offset, record, kind))

    def next_retry_ms(self) -> int | None:
        return self._retries[0][0] if self._retries else None

    def serve(self, owned: dict[Key, PartitionOffsets]) -> None:
        """Re-send due retries of partitions still owned, then serve delivery reports."""
        now = self._clock()
        while self._retries and self._retries[0][0] <= now:
            _, lane, offset, record, kind = self._retries.popleft()
            if owned.get(lane.key) is lane.state:
                self.send(lane, offset, record, kind)
        self._producer.poll(0)

    def flush(self, timeout_s: float) -> None:
        """Wait for in-flight produces (their reports run their callbacks)."""
        self._producer.flush(timeout_s)
