"""The forwarder's poll loop: one thread owns the consumer, the producer and all state.

Per partition the loop keeps the records read but not yet forwarded (in read order).
The head is planned (:mod:`.plan`): due -> produced (:mod:`.delivery`); not due -> a
wake-up is set for its due time. ``consume`` blocks at most until the next wake-up, so
there is no busy loop and no sleep. Offsets are committed only up to the last record
whose produce was acknowledged (:mod:`rmqcompat.process_queue`, :mod:`.committer`).

The records after the head stay in memory up to per-partition caps (:mod:`.holding`);
a full partition is paused and its fetch position moved back to the first record not
held, so records librdkafka fetched ahead are read again later, never skipped.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import cast

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition

from rmqcompat.clock import Clock
from rmqcompat.fetch import fetch
from rmqcompat.forwarder.committer import Committer
from rmqcompat.forwarder.delivery import FORWARDED, HOPS, QUARANTINED, Deliveries, Lane
from rmqcompat.forwarder.holding import HeldRecords, HoldLimits
from rmqcompat.forwarder.metrics import ForwarderMetrics
from rmqcompat.forwarder.owned import OwnedPartition
from rmqcompat.forwarder.plan import Forward, Planner, Wait
from rmqcompat.forwarder.recalls import RecallReader
from rmqcompat.forwarder.run import RUN_LIMIT, active_forward_run
from rmqcompat.forwarder.schedule import WakeSchedule, lateness_s
from rmqcompat.forwarder.settings import CONSUME_BATCH, LevelTopic, level_topic
from rmqcompat.process_queue import new_process_queue
from rmqcompat.properties import UNIQ_KEY
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.trace import Tracer, bulk, hooks
from rmqcompat.wire import FetchedRecord, Key

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LoopSettings:
    levels: DelayLevels
    namespace: str
    max_wait_s: float = 1.0
    commit_interval_ms: int = 200
    retry_backoff_ms: int = 500
    hold: HoldLimits = field(default_factory=HoldLimits)
    flush_timeout_s: float = 30.0


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
        tracer: Tracer | None = None,
        recalls: RecallReader | None = None,
    ) -> None:
        self._tracer = tracer or Tracer.disabled()
        self._recalls = recalls
        self._consumer = consumer
        self._s = settings
        self._metrics = metrics
        self._clock = clock
        self._planner = Planner(settings.levels, settings.namespace)
        self._owned: dict[Key, OwnedPartition] = {}
        self._paused = 0  # owned partitions whose fetching is paused
        # Level topics seen in assignments (the subscription is a pattern), by Kafka name.
        self._topics: dict[str, LevelTopic] = {}
        self._out = Deliveries(
            producer, metrics, clock, settings.retry_backoff_ms, settings.namespace, self._tracer
        )
        self._committer = Committer(
            consumer, self._owned, metrics, self._topics, settings.commit_interval_ms
        )
        self._wakes: WakeSchedule[Key] = WakeSchedule()
        self.assigned = False
        self.stopping = False
        self._fatal: KafkaError | None = None

    @property
    def fatal(self) -> KafkaError | None:
        return self._fatal or self._out.fatal

    # -- the loop -------------------------------------------------------------------------

    def step(self) -> None:
        if self.fatal is not None:
            raise KafkaException(self.fatal)
        timeout = self._wakes.poll_timeout_s(self._clock(), self._poll_cap_s())
        touched = self._take(fetch(self._consumer, CONSUME_BATCH, timeout))
        touched.update(self._wakes.pop_due(self._clock()))
        if self._recalls is not None:
            self._recalls.refresh()
        for key in touched:
            self._drain(key)
        self._out.serve(self._owns)
        if self._committer.due(self._clock()):
            self._out.tally.flush()
            self._committer.commit(list(self._owned), asynchronous=True)
            self._committer.update_lag()
            if self._recalls is not None:
                self._recalls.recalled.forget_before(self._clock())

    def _owns(self, lane: Lane) -> bool:
        part = self._owned.get(lane.key)
        return part is not None and part.lane is lane

    def _poll_cap_s(self) -> float:
        retry_ms = self._out.next_retry_ms()
        if retry_ms is None:
            return self._s.max_wait_s
        return max(0.0, min(self._s.max_wait_s, (retry_ms - self._clock()) / 1000))

    def _take(self, messages: list[Message]) -> set[Key]:
        touched: set[Key] = set()
        owned = self._owned
        # a consumed record: its headers are (str, bytes | None) pairs, never the dict or
        # str values confluent's stub allows for produce
        records = cast(list[FetchedRecord], messages)
        at, end = 0, len(records)
        while at < end:
            msg = records[at]
            err = msg.error()
            if err is not None:
                self._consumer_error(err)
                at += 1
                continue
            topic, partition = msg.topic(), msg.partition()
            if topic is None or partition is None or msg.offset() is None:
                at += 1
                continue  # not a record (the stub allows it; fetch returns records here)
            key = (topic, partition)
            part = owned.get(key)
            # A paused partition was moved back to its first record not held here, so a
            # record arriving now will be read again after it is resumed.
            if part is None or part.paused:
                at += 1
                continue
            touched.add(key)
            # the partition's run of records, held in one call; the caps are checked per
            # record, so one consume batch cannot overshoot them
            at, full = part.held.hold_run(records, at, key, part.lane.state)
            if full:
                self._pause(key, part)
                at += 1  # the record that found it full is read again after the resume
        return touched

    def _consumer_error(self, err: KafkaError) -> None:
        if err.fatal():
            self._fatal = err
        else:
            log.warning("forwarder consumer error: %s", err)

    # -- per partition --------------------------------------------------------------------

    def _drain(self, key: Key) -> None:
        part = self._owned.get(key)
        if part is None or not part.held:
            return
        held, lane, delay_ms = part.held, part.lane, part.delay_ms
        # Looked up once per drain, not per record (the tracer's switch is fixed at start).
        send, plan_read, clock = self._out.send, self._planner.plan_read, self._clock
        tracer = self._tracer
        tracing = tracer.enabled
        recalled = self._recalls.recalled.ids if self._recalls is not None else {}
        late: list[float] = []  # lateness of the records forwarded here, observed at the end
        traced: list[bulk.Forwarded] = []  # their FORWARD events, handed over at the end
        trace_clock = tracer.events.clock
        start, produce = self._out.forwarding(lane)
        run = (self._planner.accepted, delay_ms, clock, recalled, start, produce, late,
               traced if tracing else None, trace_clock, RUN_LIMIT)  # fmt: skip
        try:
            while held and not self.stopping:
                if held.take_run(active_forward_run, *run):  # the common case, many at a time
                    continue
                # the head is not in the run's common case: planned here, one record
                now = clock()
                msg, headers = held.head()
                plan = plan_read(msg, headers, delay_ms, now)
                if isinstance(plan, Forward):
                    if recalled and plan.properties.get(UNIQ_KEY) in recalled:
                        offset = msg.offset()
                        if offset is not None:  # always set on a fetched record
                            lane.state.remove(offset)
                        log.info("recalled %s dropped", plan.properties.get(UNIQ_KEY))
                        self._metrics.recalled.labels(lane.label).inc()
                    elif plan.hop:
                        send(lane, msg, plan.record, HOPS)
                    else:
                        late.append(lateness_s(plan.due_ms, now))
                        send(lane, msg, plan.record, FORWARDED)
                        if tracing:
                            traced.append((trace_clock(), msg, plan.properties, plan.due_ms))
                elif isinstance(plan, Wait):
                    self._wait(key, plan.due_ms, part)
                    break
                else:
                    log.warning("quarantining %s[%s]@%s: %s", *key, msg.offset(), plan.reason)
                    send(lane, msg, plan.record, QUARANTINED)
                    if tracing:
                        hooks.quarantined(tracer, msg, plan.reason)
                held.popleft()
        finally:  # what was forwarded is traced, even if a send raised
            hooks.forwarded(tracer, traced)
        self._metrics.lateness.observe_all(late)
        if part.paused and held.may_resume:
            self._resume(key, part)

    def _wait(self, key: Key, due_ms: int, part: OwnedPartition) -> None:
        self._wakes.wake(key, due_ms)
        # Fetching on while few records are held means the records after the head are
        # already here when it falls due (no fetch round trip after each wake-up).
        if part.held.full and not part.paused:
            self._pause(key, part)

    def _pause(self, key: Key, part: OwnedPartition) -> None:
        topic, partition = key
        self._consumer.pause([TopicPartition(topic, partition)])
        last = part.lane.state.highest_seen
        if last >= 0:
            self._consumer.seek(TopicPartition(topic, partition, last + 1))
        part.paused = True
        self._paused += 1
        self._metrics.paused.set(self._paused)

    def _resume(self, key: Key, part: OwnedPartition) -> None:
        if part.paused:
            part.paused = False
            self._paused -= 1
            self._consumer.resume([TopicPartition(*key)])
            self._metrics.paused.set(self._paused)

    # -- rebalances and shutdown ----------------------------------------------------------

    def on_assign(self, _consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self.assigned = True
        for tp in partitions:
            key = (tp.topic, tp.partition)
            if tp.topic not in self._topics:
                self._topics[tp.topic] = level_topic(tp.topic)
            topic = self._topics[tp.topic]
            lane = Lane(key, new_process_queue(), topic.label)
            self._owned[key] = OwnedPartition(lane, HeldRecords(self._s.hold), topic.delay_ms)
        self._metrics.assigned.set(len(self._owned))

    def on_revoke(self, _consumer: Consumer, partitions: list[TopicPartition]) -> None:
        # Let in-flight produces finish so their offsets can be committed before handing over.
        self._out.flush(self._s.flush_timeout_s)
        keys = [(tp.topic, tp.partition) for tp in partitions]
        self._committer.commit(keys, asynchronous=False)
        self._forget(keys)

    def on_lost(self, _consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self._forget([(tp.topic, tp.partition) for tp in partitions])

    def _forget(self, keys: list[Key]) -> None:
        for key in keys:
            part = self._owned.pop(key, None)
            if part is not None:
                self._resume(key, part)
            self._wakes.cancel(key)
            self._committer.forget(key)
        self._metrics.assigned.set(len(self._owned))

    def close_recalls(self) -> None:
        if self._recalls is not None:
            self._recalls.close()

    def close(self) -> None:
        """Finish in-flight produces and commit what was delivered (the consumer stays open)."""
        self._out.flush(self._s.flush_timeout_s)
        self._out.tally.flush()
        self._committer.commit(list(self._owned), asynchronous=False)

    def close_producer(self) -> None:
        """Close the producer; only after the consumer closed (its revoke callback still
        flushes through the producer)."""
        self._out.close()
