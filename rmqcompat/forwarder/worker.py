"""The forwarder's poll loop: one thread owns the consumer, the producer and all state.

Per partition the loop keeps the records read but not yet forwarded (in read order).
The head is planned (:mod:`.plan`): due -> produced; not due -> a wake-up is set for its
due time. Up to ``max_held`` records of a partition stay in memory, so the records after
the head are already here when it falls due (no fetch round trip per wake-up: that is
what keeps lateness low at thousands of records per second). At ``max_held`` the
partition is paused and its fetch position moved back to the first record not held, so
records librdkafka fetched ahead are read again after the wake-up, never skipped.
``consume`` blocks at most until the
next wake-up, so there is no busy loop and no sleep. Offsets are committed only up to
the last record whose produce was acknowledged (:mod:`.commit_tracker`); a failed
delivery is produced again after a back-off and holds the commit position meanwhile.
"""

from __future__ import annotations

import functools
import logging
from collections import deque
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition

from rmqcompat.forwarder.commit_tracker import CommitTracker, PartitionOffsets
from rmqcompat.forwarder.metrics import ForwarderMetrics
from rmqcompat.forwarder.plan import Forward, Quarantine, Wait, plan_head
from rmqcompat.forwarder.schedule import Clock, WakeSchedule
from rmqcompat.forwarder.settings import CONSUME_BATCH, LevelTopic
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.wire import OutgoingRecord

log = logging.getLogger(__name__)

Key = tuple[str, int]


@dataclass(frozen=True)
class LoopSettings:
    levels: DelayLevels
    namespace: str
    level_topics: dict[str, LevelTopic]
    max_wait_s: float = 1.0
    commit_interval_ms: int = 200
    retry_backoff_ms: int = 500
    #: Records of one partition held in memory before it is paused (RocketMQ's
    #: pull_threshold_for_queue plays the same role).
    max_held: int = 1000
    flush_timeout_s: float = 30.0


@dataclass
class _Pending:
    """A produce awaiting its delivery report; ``state`` identifies the partition's tenure."""

    key: Key
    state: PartitionOffsets
    offset: int
    record: OutgoingRecord
    kind: str
    label: str


class ForwardLoop:
    """Runs :meth:`step` until told to stop; not thread-safe except :attr:`stopping`.

    Raises (from :meth:`step`): :class:`KafkaException` on a fatal client error.
    """

    def __init__(
        self,
        consumer: Consumer,
        producer: Producer,
        settings: LoopSettings,
        metrics: ForwarderMetrics,
        clock: Clock,
    ) -> None:
        self._consumer = consumer
        self._producer = producer
        self._s = settings
        self._metrics = metrics
        self._clock = clock
        self._tracker = CommitTracker()
        self._held: dict[Key, deque[Message]] = {}
        self._paused: set[Key] = set()
        self._wakes = WakeSchedule()
        self._retries: deque[tuple[int, _Pending]] = deque()
        self._next_commit_ms = 0
        self.assigned = False
        self.stopping = False
        self.fatal: KafkaError | None = None

    # -- the loop -------------------------------------------------------------------------

    def step(self) -> None:
        if self.fatal is not None:
            raise KafkaException(self.fatal)
        timeout = self._wakes.poll_timeout_s(self._clock(), self._poll_cap_s())
        touched = self._take(self._consumer.consume(CONSUME_BATCH, timeout))
        for key in self._wakes.pop_due(self._clock()):
            self._resume(key)
            touched.add(key)
        for key in touched:
            self._drain(key)
        self._produce_retries()
        self._producer.poll(0)
        self._maybe_commit()

    def _poll_cap_s(self) -> float:
        if not self._retries:
            return self._s.max_wait_s
        return max(0.0, min(self._s.max_wait_s, (self._retries[0][0] - self._clock()) / 1000))

    def _take(self, messages: list[Message]) -> set[Key]:
        touched: set[Key] = set()
        for msg in messages:
            if msg.error():
                self._consumer_error(msg.error())
                continue
            key = (msg.topic(), msg.partition())
            state = self._tracker.partitions.get(key)
            # A paused partition was moved back to its first record not held here, so a
            # record arriving now will be read again after the wake-up.
            if state is None or key in self._paused or not state.track(msg.offset()):
                continue
            self._held[key].append(msg)
            touched.add(key)
        return touched

    def _consumer_error(self, err: KafkaError) -> None:
        if err.fatal():
            self.fatal = err
        else:
            log.warning("forwarder consumer error: %s", err)

    # -- per partition --------------------------------------------------------------------

    def _drain(self, key: Key) -> None:
        held = self._held.get(key)
        level = self._s.level_topics[key[0]]
        while held and not self.stopping:
            now = self._clock()
            plan = plan_head(held[0], level.delay_ms, self._s.levels, self._s.namespace, now)
            if isinstance(plan, Wait):
                self._wait(key, plan.due_ms, len(held))
                return
            self._produce(self._pending(key, held[0], plan, level.label), plan, now)
            held.popleft()

    def _pending(self, key: Key, msg: Message, plan: Forward | Quarantine, label: str) -> _Pending:
        kind = "quarantined" if isinstance(plan, Quarantine) else "hop" if plan.hop else "forwarded"
        if isinstance(plan, Quarantine):
            log.warning("quarantining %s[%s]@%s: %s", *key, msg.offset(), plan.reason)
        return _Pending(key, self._tracker.partitions[key], msg.offset(), plan.record, kind, label)

    def _wait(self, key: Key, due_ms: int, held: int) -> None:
        self._wakes.wake(key, due_ms)
        # Fetching on while few records are held means the records after the head are
        # already here when it falls due (no fetch round trip after each wake-up).
        if held >= self._s.max_held and key not in self._paused:
            self._pause(key)

    def _pause(self, key: Key) -> None:
        topic, partition = key
        self._consumer.pause([TopicPartition(topic, partition)])
        last = self._tracker.partitions[key].last_tracked
        if last is not None:
            self._consumer.seek(TopicPartition(topic, partition, last + 1))
        self._paused.add(key)
        self._metrics.paused.set(len(self._paused))

    def _resume(self, key: Key) -> None:
        if key in self._paused:
            self._paused.discard(key)
            self._consumer.resume([TopicPartition(*key)])
            self._metrics.paused.set(len(self._paused))

    # -- producing ------------------------------------------------------------------------

    def _produce(self, pending: _Pending, plan: Forward | Quarantine, now_ms: int) -> None:
        if isinstance(plan, Forward) and not plan.hop:
            self._metrics.lateness.observe(max(0, now_ms - plan.due_ms) / 1000)
        self._send(pending)

    def _send(self, pending: _Pending) -> None:
        rec = pending.record
        callback = functools.partial(self._on_delivery, pending)
        while True:
            try:
                self._producer.produce(
                    rec.topic, rec.value, rec.key, headers=rec.headers, on_delivery=callback
                )
                return
            except BufferError:
                # The local queue is full: serve delivery reports until there is room.
                self._producer.poll(0.1)

    def _on_delivery(self, pending: _Pending, err: KafkaError | None, _msg: Any) -> None:
        if err is None:
            pending.state.finish(pending.offset)
            counter = getattr(self._metrics, pending.kind if pending.kind != "hop" else "hops")
            counter.labels(pending.label).inc()
            return
        self._metrics.produce_failures.inc()
        log.warning("forwarding %s[%s]@%s failed: %s", *pending.key, pending.offset, err)
        if err.fatal():
            self.fatal = err
        self._retries.append((self._clock() + self._s.retry_backoff_ms, pending))

    def _produce_retries(self) -> None:
        now = self._clock()
        while self._retries and self._retries[0][0] <= now:
            _, pending = self._retries.popleft()
            if self._tracker.partitions.get(pending.key) is pending.state:
                self._send(pending)

    # -- offsets and rebalances -----------------------------------------------------------

    def _maybe_commit(self) -> None:
        now = self._clock()
        if now < self._next_commit_ms:
            return
        self._next_commit_ms = now + self._s.commit_interval_ms
        self._commit(list(self._tracker.partitions), asynchronous=True)
        self._update_lag()

    def _commit(self, keys: list[Key], asynchronous: bool) -> None:
        positions = self._tracker.to_commit()
        offsets = [TopicPartition(*key, positions[key]) for key in keys if key in positions]
        if not offsets:
            return
        try:
            self._consumer.commit(offsets=offsets, asynchronous=asynchronous)
        except KafkaException as exc:
            # Not fatal: the records stay uncommitted and may be forwarded again (at least once).
            log.warning("forwarder commit failed: %s", exc)
            return
        for tp in offsets:
            self._tracker.partitions[(tp.topic, tp.partition)].committed(tp.offset)

    def _update_lag(self) -> None:
        lag: dict[str, int] = {t.label: 0 for t in self._s.level_topics.values()}
        for key, state in self._tracker.partitions.items():
            _, high = self._consumer.get_watermark_offsets(TopicPartition(*key), cached=True)
            if state.last_tracked is not None and high >= 0:
                unread = max(0, high - state.last_tracked - 1)
                lag[self._s.level_topics[key[0]].label] += unread + state.pending
        for label, value in lag.items():
            self._metrics.parked.labels(label).set(value)

    def on_assign(self, _consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self.assigned = True
        for tp in partitions:
            key = (tp.topic, tp.partition)
            self._tracker.assign(key)
            self._held[key] = deque()
        self._metrics.assigned.set(len(self._tracker.partitions))

    def on_revoke(self, _consumer: Consumer, partitions: list[TopicPartition]) -> None:
        # Let in-flight produces finish so their offsets can be committed before handing over.
        self._producer.flush(self._s.flush_timeout_s)
        keys = [(tp.topic, tp.partition) for tp in partitions]
        self._commit(keys, asynchronous=False)
        self._forget(keys)

    def on_lost(self, _consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self._forget([(tp.topic, tp.partition) for tp in partitions])

    def _forget(self, keys: list[Key]) -> None:
        for key in keys:
            self._resume(key)
            self._wakes.cancel(key)
            self._tracker.drop(key)
            self._held.pop(key, None)
        self._metrics.assigned.set(len(self._tracker.partitions))

    def close(self) -> None:
        """Finish in-flight produces and commit what was delivered (the consumer stays open)."""
        self._producer.flush(self._s.flush_timeout_s)
        self._commit(list(self._tracker.partitions), asynchronous=False)
