"""Where trace events go: an asynchronous, bounded Kafka writer, or nowhere.

Tracing must never slow down, block or break the data path. :meth:`KafkaTraceSink.defer`
appends what the data path has at hand (a listener call's messages, an acknowledged send)
and the function that encodes its events (:mod:`.bulk`) to a bounded buffer and returns
at once (no lock, no I/O, nothing built or encoded); :meth:`~KafkaTraceSink.emit` does the
same for one event already built. When the buffer is full the events are dropped and
counted. One background thread encodes events, packs them
into trace records of up to :data:`~rmqcompat.trace.batch.MAX_EVENTS` events
(:func:`~rmqcompat.trace.batch.pack`) and produces those to the namespace's trace topic;
events it cannot write (encoding error, librdkafka queue full, failed delivery, still
unsent at close) are counted too. :meth:`KafkaTraceSink.stats` exposes every counter,
in events, and every trace record written after a drop carries the sink's count so far in
its :data:`~rmqcompat.trace.schema.DROPPED_HEADER` header, from which the audit reports
the events its report is missing (all but those dropped after the sink's last record).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

from confluent_kafka import KafkaError, KafkaException, Message, Producer

from rmqcompat.closing import close_producer
from rmqcompat.config import ClientConfig
from rmqcompat.errors import RmqCompatError
from rmqcompat.producer_id import new_idempotent_producer
from rmqcompat.topics.naming import TRACE_TOPIC, to_kafka_topic
from rmqcompat.topics.topology import provision_topology, system_topology
from rmqcompat.trace.batch import pack
from rmqcompat.trace.codec import TraceRecord, encode
from rmqcompat.trace.schema import DROPPED_HEADER

_log = logging.getLogger("rmqcompat.trace")

#: Events buffered before ``defer`` and ``emit`` start dropping (RocketMQ's trace queue is
#: 1024 batches; an event here is about 150 bytes once encoded).
DEFAULT_CAPACITY = 20_000
#: Encodes deferred events on the sink's thread: ``write(*args)`` is their encodings.
Write = Callable[..., Sequence[bytes]]
#: What a ``write`` raises for values it cannot encode (the events are dropped, counted).
ENCODING_ERRORS = (ValueError, TypeError, KeyError, AttributeError, OverflowError)
#: A buffered entry: ``(write, args, events)``.
_Entry = tuple[Write, tuple[Any, ...], int]
#: The longest the sink thread waits between two passes (a pass's worth of events waiting
#: ends it sooner).
_IDLE_POLL_S = 0.02
#: Events drained between two polls of the sink thread.
DRAIN_PASS = 5_000
#: The sink thread lets go of the GIL after about every 64 events it encodes.
_POLL_EVERY = 64
#: How trace records are compressed: lz4 (measured in ``docs/trace-audit.md``).
_COMPRESSION = {"compression.type": "lz4"}
#: Reports of records :func:`close_producer` dropped: counted as unsent, not as failed.
_PURGED = (KafkaError._PURGE_QUEUE, KafkaError._PURGE_INFLIGHT)  # noqa: SLF001 - public codes
_CLOSE_FLUSH_S = 2.0


@dataclass(frozen=True)
class TraceStats:
    """Counters of a sink since it was built.

    ``written``: acknowledged by the broker; ``dropped_full``: refused by a full buffer;
    ``dropped_failed``: could not be encoded or produced, or delivery failed;
    ``dropped_unsent``: still buffered or in flight when the sink closed; ``buffered``:
    waiting now.
    """

    written: int = 0
    dropped_full: int = 0
    dropped_failed: int = 0
    dropped_unsent: int = 0
    buffered: int = 0

    @property
    def dropped(self) -> int:
        return self.dropped_full + self.dropped_failed + self.dropped_unsent


class TraceSink(Protocol):
    """What clients emit trace events to. ``emit`` and ``defer`` never block and never
    raise."""

    @property
    def enabled(self) -> bool: ...
    def emit(self, event: TraceRecord) -> None: ...
    def defer(self, write: Write, args: tuple[Any, ...], events: int) -> None:
        """Later, on the sink's thread: write the ``events`` encodings ``write(*args)``
        returns (``args`` must not change meanwhile)."""

    def start(self) -> None: ...
    def close(self) -> None: ...
    def stats(self) -> TraceStats: ...


class DisabledTraceSink:
    """The sink of a client whose tracing is switched off: every event is ignored."""

    enabled = False

    def emit(self, event: TraceRecord) -> None:
        pass

    def defer(self, write: Write, args: tuple[Any, ...], events: int) -> None:
        pass

    def start(self) -> None:
        pass

    def close(self) -> None:
        pass

    def stats(self) -> TraceStats:
        return TraceStats()


ProducerFactory = Callable[[dict[str, Any]], Producer]


class KafkaTraceSink:
    """Writes trace events to ``<namespace>.rmq.trace`` from one background thread.

    Args:
        client: the owning client's settings (bootstrap servers, namespace, passthrough
            librdkafka settings such as SASL).
        capacity: events buffered before new ones are dropped.
        producer_factory: builds the librdkafka producer (tests inject failures here).

    ``start`` creates the trace topic if missing (on the sink's thread, so a slow broker
    delays only tracing) and starts the thread; ``close`` writes what is buffered, waits
    at most about 3 s in all, and counts the rest as ``dropped_unsent``. Events emitted
    before ``start`` wait in the buffer.

    Cost, all of it paid under the GIL by the data path's process: one deque append per
    call on the emitting thread (a listener call's events are one entry); on the sink
    thread, per event its encoding (:mod:`.bulk`: the fields a call's events share are
    encoded once) and its share of a record (one ``produce`` and one delivery report per
    record of up to :data:`~rmqcompat.trace.batch.MAX_EVENTS` events). Delivery
    reports are served by the sink thread's own ``poll`` and count the record's events
    as written or failed; what librdkafka accepted and neither reported at close is
    counted as unsent.
    """

    enabled = True

    def __init__(
        self,
        client: ClientConfig,
        capacity: int = DEFAULT_CAPACITY,
        producer_factory: ProducerFactory = new_idempotent_producer,
    ) -> None:
        if capacity <= 0:
            raise ValueError(f"trace capacity must be > 0, not {capacity}")
        self._client = client
        self._capacity = capacity
        self._producer_factory = producer_factory
        self.topic = to_kafka_topic(TRACE_TOPIC, client.namespace)
        self._buffer: deque[_Entry] = deque()
        # events appended (by the emitting threads: an increment lost to a race lets a
        # few events more in) and taken out (by the sink thread and close())
        self._in = self._out = 0
        self._lock = threading.Lock()  # counters written by emitters' and close()'s threads
        # events in records librdkafka accepted, and in those delivered: sink thread only
        self._accepted = self._written = 0
        self._failed_deliveries = 0
        self._dropped_full = self._dropped_failed = self._dropped_unsent = 0
        #: names this sink in its records' drop counts (a count is per sink, cumulative)
        self._sink_id = uuid.uuid4().hex[:16]
        self._stopping = threading.Event()
        #: set when a pass's worth of events waits (or on close): ends the idle wait
        self._due = threading.Event()
        self._thread: threading.Thread | None = None

    def emit(self, event: TraceRecord) -> None:
        self.defer(_encode_one, (event,), 1)

    def defer(self, write: Write, args: tuple[Any, ...], events: int) -> None:
        if self._in - self._out + events > self._capacity:  # the call's events fit, or none
            with self._lock:
                self._dropped_full += events
            return
        self._in += events
        self._buffer.append((write, args, events))  # atomic under the GIL
        if self._in - self._out >= DRAIN_PASS and not self._due.is_set():
            self._due.set()  # a pass's worth waits: the sink thread need not sleep it out

    def start(self) -> None:
        if self._thread is None:
            self._stopping.clear()  # a sink may be started again after close()
            self._thread = threading.Thread(target=self._run, name="rmqcompat-trace", daemon=True)
            self._thread.start()

    def close(self) -> None:
        self._stopping.set()
        self._due.set()
        if self._thread is not None:
            # bounded: the thread may still wait on a broker that does not answer
            self._thread.join(_CLOSE_FLUSH_S + 1)
            self._thread = None
        unsent = 0
        while True:
            try:
                unsent += self._buffer.popleft()[2]
            except IndexError:
                break
        self._out += unsent
        self._count_unsent(unsent)

    def stats(self) -> TraceStats:
        with self._lock:
            return TraceStats(
                self._written,
                self._dropped_full,
                self._dropped_failed,
                self._dropped_unsent,
                sum(entry[2] for entry in list(self._buffer)),  # one C call copies it
            )

    def _run(self) -> None:
        try:
            producer = self._open()
        except (KafkaException, RmqCompatError, ValueError) as exc:
            _log.warning("trace sink disabled, no producer for %s: %s", self.topic, exc)
            self._stopping.wait()
            return
        try:
            while not self._stopping.is_set():
                self._drain(producer)
                # Events collect for a while between passes unless a backlog waits: a pass
                # per few events would keep this thread on the GIL the data path needs.
                # The wait ends as soon as a pass's worth waits (``defer`` says so): at
                # 700k events/s a wait sat out was 14,000 events, which left a buffer of
                # 20,000 too little room for passes that wait for the GIL.
                if self._in - self._out < DRAIN_PASS:
                    self._due.wait(_IDLE_POLL_S)
                    self._due.clear()
                    producer.poll(0)  # the delivery reports that came meanwhile
            self._drain(producer)
            producer.flush(_CLOSE_FLUSH_S)
        finally:
            close_producer(producer)  # purges the unsent: their reports count nothing
            # accepted and never reported: unsent (and no longer outstanding, should the
            # sink be started again)
            outstanding = self._accepted - self._written - self._failed_deliveries
            self._accepted -= outstanding
            self._count_unsent(outstanding)

    def _open(self) -> Producer:
        try:
            client = self._client
            planned = system_topology(
                TRACE_TOPIC,
                namespace=client.namespace,
                max_message_size=client.max_message_size,
            )
            provision_topology(client.librdkafka("admin"), planned)
        except (KafkaException, RmqCompatError) as exc:  # the broker may auto-create it
            _log.warning("could not create trace topic %s: %s", self.topic, exc)
        return self._producer_factory(producer_settings(self._client))

    def _drain(self, producer: Producer) -> None:
        """Produce what is buffered (at most one pass's worth) as trace records."""
        buffer = self._buffer
        if not buffer:
            return
        produce, topic = producer.produce, self.topic
        for value, count in pack(self._encoded(producer)):
            try:
                produce(
                    topic,
                    value,
                    headers=self._drop_count(),
                    on_delivery=partial(self._delivered, count),
                )
            except BufferError:
                producer.poll(_IDLE_POLL_S)  # librdkafka's queue is full: let it drain once
                self._count_failed(count)
            except KafkaException as exc:
                _log.warning("trace record of %d events not produced: %s", count, exc)
                self._count_failed(count)
            else:
                self._accepted += count
        producer.poll(0)  # serves delivery reports

    def _drop_count(self) -> list[tuple[str, str | bytes | None]] | None:
        """The header of the next record: this sink's id and the events it dropped so far
        (full buffer, failed), once there are any."""
        dropped = self._dropped_full + self._dropped_failed  # ints: read without the lock
        if not dropped:
            return None
        return [(DROPPED_HEADER, f"{self._sink_id} {dropped}".encode())]

    def _encoded(self, producer: Producer) -> list[Sequence[bytes]]:
        """The buffered events, encoded, about :data:`DRAIN_PASS` at most (whole entries,
        each entry's encodings as its ``write`` returned them); an entry that cannot be
        encoded is dropped and its events counted."""
        popleft = self._buffer.popleft
        encodings: list[Sequence[bytes]] = []
        taken = since_poll = 0
        while taken < DRAIN_PASS:
            try:
                write, args, events = popleft()
            except IndexError:
                break
            taken += events
            self._out += events
            since_poll += events
            if since_poll > _POLL_EVERY:
                # poll releases the GIL: the data path's threads, waiting for it after
                # their own I/O, get it now instead of after the 5 ms switch interval
                producer.poll(0)
                since_poll = 0
            try:
                encodings.append(write(*args))  # all of the entry's events, or none
            except ENCODING_ERRORS as exc:
                _log.warning("%d trace events not encodable, dropped: %s", events, exc)
                self._count_failed(events)
        return encodings

    def _delivered(self, count: int, error: KafkaError | None, _record: Message) -> None:
        # on the sink thread (its poll and flush): one report per record of ``count`` events
        if error is None:
            with self._lock:
                self._written += count
        elif error.code() not in _PURGED:
            with self._lock:
                self._failed_deliveries += count
                self._dropped_failed += count

    def _count_failed(self, count: int) -> None:
        with self._lock:
            self._dropped_failed += count

    def _count_unsent(self, count: int) -> None:
        with self._lock:
            self._dropped_unsent += count


def producer_settings(client: ClientConfig) -> dict[str, Any]:
    """The trace producer's librdkafka settings.

    Idempotent: a retried produce never stores an event twice; ``acks=all``: an event the
    audit counts on survives the loss of a broker; lz4: a record's events repeat their
    client, group and topic, and storing them uncompressed cost a broker on the
    consumer's machine more CPU than the consumer's own tracing (docs/trace-audit.md).
    """
    return client.librdkafka(
        "producer",
        **{"linger.ms": 50, "acks": "all", "enable.idempotence": True, **_COMPRESSION},
    )


def _encode_one(event: TraceRecord) -> list[bytes]:
    return [encode(event)]
