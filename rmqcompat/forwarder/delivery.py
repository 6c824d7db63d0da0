"""Producing planned records and acting on their delivery reports.

A record's source offset is marked finished (so it may be committed) only in its
successful delivery report. A failure is classified by the producer's one table
(:mod:`rmqcompat.producer.failures`):

- retriable (busy, timed out, unreachable, ...): produced again after
  ``retry_backoff_ms``; it holds the partition's commit position meanwhile, unless the
  partition was revoked in between (then the new owner forwards it);
- refused for good (the real topic is gone, not authorised, too large, ...): the source
  record, with its original headers and the reason, goes to the quarantine topic instead,
  and the offset moves on once that is acknowledged. Retrying such a record forever
  would pin the commit position and re-forward everything after it on each restart.
  A quarantine record that is itself refused is retried (never dropped) and logged.

librdkafka reports a missing topic as ``UNKNOWN_TOPIC_OR_PART`` / ``_UNKNOWN_TOPIC`` only
after it saw the topic absent for ``topic.metadata.propagation.max.ms`` (30 s by
default); before that a send to it just times out (retriable). So a topic being created
is not mistaken for a deleted one.

Per record this is the hot path. The delivery callback is the one per-record object,
an :class:`InFlight` holding (lane, source, record fields, kind) until its report and
itself the callable librdkafka calls; a retried record is produced again with the same
object. It replaced a ``functools.partial`` over (lane, source, record, kind): the
partial, its argument tuple, the record and the record's ``__dict__`` all lived until
the report, and the garbage collector walks every object that does (20,000 sends in
isolation: produce + report 14 us per record, 7 us with the collector off). Counts go
to a :class:`~rmqcompat.forwarder.metrics.Tally`.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer

from rmqcompat.clock import Clock
from rmqcompat.closing import close_producer
from rmqcompat.forwarder.metrics import ForwarderMetrics, Tally
from rmqcompat.process_queue import ProcessQueue
from rmqcompat.producer.failures import is_retriable
from rmqcompat.properties import Headers
from rmqcompat.quarantine import quarantine_record
from rmqcompat.trace import Tracer, hooks
from rmqcompat.wire import KafkaRecord, Key, OutgoingRecord

log = logging.getLogger(__name__)

FORWARDED = "forwarded"
HOPS = "hops"
QUARANTINED = "quarantined"


@dataclass(frozen=True, slots=True)
class Lane:
    """One tenure of one assigned partition: a re-assignment gets a new lane (and state)."""

    key: Key
    state: ProcessQueue
    label: str


class InFlight:
    """One produce awaiting its delivery report; called by librdkafka with the report.

    ``source`` is the consumed level record it stands for (its offset is finished on
    success; it is what gets quarantined); ``kind`` is the metrics counter a successful
    delivery increments: ``forwarded``, ``hops`` or ``quarantined``. The record to
    produce is kept as its fields, not as the :class:`OutgoingRecord`, so one object fewer
    per record outlives the young GC generation.
    """

    __slots__ = ("headers", "key", "kind", "lane", "owner", "partition", "source", "topic", "value")

    def __init__(
        self,
        owner: Deliveries,
        lane: Lane,
        kind: str,
        source: KafkaRecord,
        topic: str,
        value: bytes,
        key: bytes | None,
        headers: Headers | None,
        partition: int,
    ) -> None:
        self.owner = owner
        self.lane = lane
        self.kind = kind
        self.source = source
        self.topic = topic
        self.value = value
        self.key = key
        self.headers = headers
        self.partition = partition  # -1: the key picks one

    @classmethod
    def of(cls, owner: Deliveries, lane: Lane, kind: str, source: KafkaRecord,
           record: OutgoingRecord) -> InFlight:  # fmt: skip
        """The send of ``record`` for ``source``."""
        partition = -1 if record.partition is None else record.partition
        return cls(owner, lane, kind, source, record.topic, record.value, record.key,
                   record.headers, partition)  # fmt: skip

    def __call__(self, err: KafkaError | None, _msg: Any) -> None:
        if err is not None:
            self.owner.failed(self, err)
            return
        offset = self.source.offset()
        if offset is not None:  # always set on a fetched record
            self.lane.state.remove(offset)
        self.owner.tally.add(self.kind, self.lane.label)


class Deliveries:
    """Owns the producer; not thread-safe (the poll thread calls everything)."""

    def __init__(
        self,
        producer: Producer,
        metrics: ForwarderMetrics,
        clock: Clock,
        retry_backoff_ms: int,
        namespace: str = "",
        tracer: Tracer | None = None,
    ) -> None:
        self._producer = producer
        self._tracer = tracer or Tracer.disabled()  # QUARANTINE of records refused for good
        self._metrics = metrics
        self._clock = clock
        self._backoff_ms = retry_backoff_ms
        self._namespace = namespace
        self._retries: deque[tuple[int, InFlight]] = deque()
        # Quarantine records decided in a delivery report; produced by serve(), because
        # produce() may have to poll for queue room, which a report callback must not do.
        self._ready: deque[InFlight] = deque()
        self.tally = Tally(metrics)
        self.fatal: KafkaError | None = None

    def send(self, lane: Lane, source: KafkaRecord, record: OutgoingRecord, kind: str) -> None:
        """Produce ``record`` for ``source`` (see :class:`InFlight`)."""
        self._produce(InFlight.of(self, lane, kind, source, record))

    def forwarding(self, lane: Lane) -> tuple[Callable[..., InFlight], Callable[..., None]]:
        """What a run of forwards from ``lane`` (:mod:`.run`) sends with: the factory of
        their :class:`InFlight` (from the source record and the fields to produce) and the
        producer's ``produce``."""
        return partial(InFlight, self, lane, FORWARDED), self._producer.produce

    def _produce(self, send: InFlight) -> None:
        while True:
            try:
                # positional, as forward_run calls it (keywords cost 0.4 us a call)
                self._producer.produce(
                    send.topic, send.value, send.key, send.partition, send, None, 0,
                    send.headers,  # type: ignore[arg-type]  # stub's list is invariant
                )  # fmt: skip
                return
            except BufferError:
                # The local queue is full: serve delivery reports until there is room.
                self._producer.poll(0.1)
            except KafkaException as exc:
                # Refused before sending (topic known missing, record above message.max.bytes).
                self.failed(send, exc.args[0])
                return

    def failed(self, send: InFlight, err: KafkaError) -> None:
        """``send`` failed: fatal, quarantine its source (refused for good) or retry it."""
        lane, source, topic, kind = send.lane, send.source, send.topic, send.kind
        self._metrics.produce_failures.inc()
        where = f"{lane.key[0]}[{lane.key[1]}]@{source.offset()} -> {topic}"
        if err.fatal():
            self.fatal = err
        elif not is_retriable(err) and kind != QUARANTINED:
            log.error("forwarding %s refused for good (%s): quarantining it", where, err)
            self._metrics.undeliverable.labels(lane.label, err.name()).inc()
            reason = f"{err.name()}: {err.str()} (forwarding to {topic})"
            quarantine = quarantine_record(source, reason, self._namespace)
            self._ready.append(InFlight.of(self, lane, QUARANTINED, source, quarantine))
            if self._tracer.enabled:
                hooks.quarantined(self._tracer, source, reason)
            return
        elif kind == QUARANTINED:
            log.error("quarantining %s failed (retried): %s", where, err)
        else:
            log.warning("forwarding %s failed (retried): %s", where, err)
        self._retries.append((self._clock() + self._backoff_ms, send))

    def next_retry_ms(self) -> int | None:
        if self._ready:
            return self._clock()
        return self._retries[0][0] if self._retries else None

    def serve(self, owns: Callable[[Lane], bool]) -> None:
        """Re-send due retries of the lanes still owned (``owns``), then serve delivery
        reports."""
        now = self._clock()
        due = list(self._ready)
        self._ready.clear()
        while self._retries and self._retries[0][0] <= now:
            due.append(self._retries.popleft()[1])
        for send in due:
            if owns(send.lane):
                self._produce(send)
        self._producer.poll(0)

    def flush(self, timeout_s: float) -> None:
        """Wait for in-flight produces (their reports run their callbacks), including the
        quarantine records those reports decided on, so their offsets can be committed."""
        self._producer.flush(timeout_s)
        if self._ready:
            ready = list(self._ready)
            self._ready.clear()
            for send in ready:
                self._produce(send)
            self._producer.flush(timeout_s)

    def close(self) -> None:
        """Close the producer, after the last :meth:`flush`. What is still queued is
        dropped, not lost: its record's offset was never committed, so it is forwarded
        again. Never blocks on an unreachable broker."""
        close_producer(self._producer)
