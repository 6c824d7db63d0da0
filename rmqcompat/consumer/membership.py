"""Which partitions a consumer reads and where it starts on each.

CLUSTERING: Kafka's group protocol assigns partitions; these callbacks (run on the poll
thread) set start offsets, commit new groups' start positions at once, and commit
synchronously before a partition is taken away.
BROADCASTING: the instance assigns every partition of its topics itself, starting from
its local offset file, and periodically adds partitions created since (RocketMQ
re-balances every 20 s).

The callbacks never raise: librdkafka assigns the partitions anyway when a callback
fails, and a partition the consumer did not register would be fetched and ignored.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable, Mapping
from functools import partial

from confluent_kafka import OFFSET_INVALID, Consumer, KafkaException, TopicPartition

from rmqcompat.clock import Clock, epoch_ms
from rmqcompat.consumer.listener import ConsumeFromWhere
from rmqcompat.consumer.partitions import Partitions
from rmqcompat.consumer.positions import (
    Watermarks,
    YoungQueue,
    default_timestamp_ms,
    looked_up_once,
    resolve,
    start_positions,
)
from rmqcompat.consumer.settings import ConsumerSettings
from rmqcompat.consumer.subscriptions import Subscriptions
from rmqcompat.lookups import with_retries
from rmqcompat.message import MessageQueue
from rmqcompat.wire import Key

_log = logging.getLogger("rmqcompat.consumer")

METADATA_TIMEOUT_S = 30.0
#: a periodic rediscovery must not hold up the poll loop for long; it retries next round
DISCOVERY_TIMEOUT_S = 1.0


class Membership:
    """Assign / revoke handling shared by both message models."""

    def __init__(
        self,
        settings: ConsumerSettings,
        subscriptions: Subscriptions,
        partitions: Partitions,
        incremental: bool,
        now_ms: Clock = epoch_ms,
    ) -> None:
        self._settings = settings
        self._subs = subscriptions
        self._partitions = partitions
        self._incremental = incremental
        self._stored: Mapping[Key, int] = {}  # BROADCASTING: the offset file read at start
        self._now_ms = now_ms
        self._timestamp_ms = default_timestamp_ms(settings.consume_timestamp_ms, now_ms())
        #: Called with the partitions about to be revoked, before their offsets are committed
        #: (orderly consumption waits there for their running listener calls to end).
        self.before_revoke: Callable[[list[Key]], None] = lambda keys: None
        #: Called with partitions about to be assigned (the direct fetch routes them:
        #: :meth:`rmqcompat.consumer.fetcher.DirectFetcher.route`).
        self.before_assign: Callable[[list[TopicPartition]], None] = lambda tps: None

    def subscribe(self, consumer: Consumer) -> None:
        """CLUSTERING: join the group for the subscribed topics."""
        consumer.subscribe(
            self._subs.physical_topics(),
            on_assign=self.on_assign,
            on_revoke=self.on_revoke,
            on_lost=self.on_lost,
        )

    def on_assign(self, consumer: Consumer, tps: list[TopicPartition]) -> None:
        try:
            positions = self.begin(consumer, tps, _stored(consumer, tps))
        except Exception:
            # starting from a guessed position could skip messages: let librdkafka use the
            # committed offset, else the earliest one (auto.offset.reset)
            _log.exception("group %s: start lookup failed; using committed/earliest", self._group)
            positions = [TopicPartition(tp.topic, tp.partition, OFFSET_INVALID) for tp in tps]
            self._register(positions)
        try:
            self.before_assign(positions)
            if self._incremental:
                consumer.incremental_assign(positions)
            else:
                consumer.assign(positions)
            _fetch_from_start(consumer, positions)
        finally:
            self._partitions.persist_starts()  # a new group's start is durable at once

    def on_revoke(self, consumer: Consumer, tps: list[TopicPartition]) -> None:
        keys = [(tp.topic, tp.partition) for tp in tps]
        try:
            try:
                self.before_revoke(keys)
            finally:
                self._partitions.drop(keys, commit=True)
        finally:
            self._unassign(consumer, tps)

    def on_lost(self, consumer: Consumer, tps: list[TopicPartition]) -> None:
        # the partitions already belong to someone else: committing now would be refused
        try:
            self._partitions.drop([(tp.topic, tp.partition) for tp in tps], commit=False)
        finally:
            self._unassign(consumer, tps)

    def reconcile(self, consumer: Consumer) -> None:
        """Align with librdkafka's assignment after a rebalance callback raised anyway
        (confluent-kafka then assigns or unassigns by itself): partitions it assigned
        start from their committed offset, else the earliest one; never a guess."""
        assigned = {(tp.topic, tp.partition) for tp in consumer.assignment()}
        known = set(self._partitions.keys())
        self._partitions.drop(known - assigned, commit=False)
        fresh = [TopicPartition(t, p, OFFSET_INVALID) for t, p in sorted(assigned - known)]
        self._register(fresh)
        _fetch_from_start(consumer, fresh)

    def _unassign(self, consumer: Consumer, tps: list[TopicPartition]) -> None:
        if self._incremental:
            consumer.incremental_unassign(tps)
        else:
            consumer.unassign()

    @property
    def _group(self) -> str:
        return self._settings.group

    def begin(
        self,
        consumer: Consumer,
        tps: list[TopicPartition],
        stored: Mapping[Key, int],
        from_where: ConsumeFromWhere | None = None,
    ) -> list[TopicPartition]:
        """Register ``tps`` and return them with concrete start offsets.

        ``from_where`` overrides ``consume_from_where`` for partitions without a stored
        offset.
        """
        watermarks = looked_up_once(partial(_watermarks, consumer))
        logical = start_positions(
            tps,
            stored,
            from_where or self._settings.consume_from_where,
            {self._subs.own_retry_physical},
            lambda lookups: self._by_time(consumer, lookups),
            self._young(consumer, watermarks),
        )
        positions = resolve(logical, watermarks)
        self._register(positions, stored)
        _log.info("group %s starts %s", self._group, _describe(positions))
        return positions

    def _register(
        self, positions: list[TopicPartition], stored: Mapping[Key, int] | None = None
    ) -> None:
        for tp in positions:
            key = (tp.topic, tp.partition)
            queue = MessageQueue(self._subs.logical(tp.topic), tp.partition)
            durable = stored is not None and stored.get(key, -1) >= 0
            self._partitions.add(key, queue, tp.offset, durable=durable)

    def _by_time(self, consumer: Consumer, tps: list[TopicPartition]) -> list[TopicPartition]:
        query = [TopicPartition(tp.topic, tp.partition, self._timestamp_ms) for tp in tps]
        return list(consumer.offsets_for_times(query, timeout=METADATA_TIMEOUT_S))

    def _young(self, consumer: Consumer, watermarks: Watermarks) -> YoungQueue:
        s = self._settings
        return YoungQueue(
            s.young_queue_max_messages,
            int(s.young_queue_max_age_s * 1000),
            watermarks,
            partial(_offset_at_time, consumer),
            self._now_ms,
        )

    def assign_all(self, consumer: Consumer, stored: Mapping[Key, int]) -> None:
        """BROADCASTING: read every partition of every subscribed topic."""
        metadata = consumer.list_topics(timeout=METADATA_TIMEOUT_S).topics
        tps = []
        for topic in self._subs.physical_topics():
            if topic not in metadata or metadata[topic].error is not None:
                _log.warning("topic %s does not exist; broadcasting consumer skips it", topic)
                continue
            tps += [TopicPartition(topic, p) for p in sorted(metadata[topic].partitions)]
        self._stored = stored
        positions = self.begin(consumer, tps, stored)
        self.before_assign(positions)
        consumer.assign(positions)
        self._partitions.persist_starts()

    def rediscover(self, consumer: Consumer) -> None:
        """BROADCASTING: also read partitions (and topics) created since the last look.

        A partition that appears after start is read from its beginning: everything in
        it was written after this consumer started, so "last offset" would skip what
        arrived before it was noticed. Never raises for broker errors: they are logged
        and the next round tries again.
        """
        counts: dict[str, Iterable[int]] = {}
        for topic in self._subs.physical_topics():
            try:
                meta = consumer.list_topics(topic, timeout=DISCOVERY_TIMEOUT_S).topics.get(topic)
            except KafkaException as exc:
                _log.warning("group %s: metadata of %s unavailable: %s", self._group, topic, exc)
                continue
            if meta is not None and meta.error is None:
                counts[topic] = meta.partitions
        fresh = new_partitions(counts, set(self._partitions.keys()))
        if not fresh:
            return
        try:
            positions = self.begin(
                consumer, fresh, self._stored, ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET
            )
            self.before_assign(positions)
            consumer.incremental_assign(positions)
        except KafkaException as exc:
            _log.warning("group %s: cannot add %s: %s", self._group, _describe(fresh), exc)
            # forget them, so the next round tries again
            self._partitions.drop([(tp.topic, tp.partition) for tp in fresh], commit=False)
            return
        self._partitions.persist_starts()


def _fetch_from_start(consumer: Consumer, tps: list[TopicPartition]) -> None:
    """Resume ``tps``, which this consumer has just (re)started tracking, unpaused.

    librdkafka keeps a partition's pause across unassign and assign: a partition that flow
    control paused before it was revoked or lost, and that came back to this member, would
    otherwise never be fetched again (its fresh state says it is not paused, so nothing
    resumes it), and the group would stall behind its committed offset.
    """
    if tps:
        consumer.resume(tps)


def new_partitions(
    partitions: Mapping[str, Iterable[int]], known: Collection[Key]
) -> list[TopicPartition]:
    """The partitions of ``partitions`` (topic -> partition ids) not in ``known``, sorted."""
    return [
        TopicPartition(topic, p)
        for topic in sorted(partitions)
        for p in sorted(partitions[topic])
        if (topic, p) not in known
    ]


def _stored(consumer: Consumer, tps: list[TopicPartition]) -> dict[Key, int]:
    """The group's committed offsets; a timed-out lookup is retried (raises when all fail)."""
    if not tps:
        return {}
    committed = with_retries(
        "committed offsets lookup", lambda: consumer.committed(tps, timeout=METADATA_TIMEOUT_S)
    )
    return {(tp.topic, tp.partition): tp.offset for tp in committed}


def _watermarks(consumer: Consumer, tp: TopicPartition) -> tuple[int, int]:
    low, high = with_retries(
        f"watermarks of {tp.topic}[{tp.partition}]",
        lambda: consumer.get_watermark_offsets(tp, METADATA_TIMEOUT_S, cached=False),
    )
    return low, high


def _offset_at_time(consumer: Consumer, tp: TopicPartition, stamp_ms: int) -> int:
    query = [TopicPartition(tp.topic, tp.partition, stamp_ms)]
    offset: int = consumer.offsets_for_times(query, timeout=METADATA_TIMEOUT_S)[0].offset
    return offset


def _describe(tps: list[TopicPartition]) -> str:
    return ", ".join(f"{tp.topic}[{tp.partition}]@{tp.offset}" for tp in tps)
