"""Which partitions a consumer reads and where it starts on each.

CLUSTERING: Kafka's group protocol assigns partitions; these callbacks (run on the poll
thread) set start offsets and commit synchronously before a partition is taken away.
BROADCASTING: the instance assigns every partition of its topics itself, starting from
its local offset file.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from confluent_kafka import Consumer, TopicPartition

from rmqcompat.consumer.partitions import Key, Partitions
from rmqcompat.consumer.positions import start_positions
from rmqcompat.consumer.settings import ConsumerSettings
from rmqcompat.consumer.subscriptions import Subscriptions
from rmqcompat.message import MessageQueue

_log = logging.getLogger("rmqcompat.consumer")

METADATA_TIMEOUT_S = 30.0


class Membership:
    """Assign / revoke handling shared by both message models."""

    def __init__(
        self,
        settings: ConsumerSettings,
        subscriptions: Subscriptions,
        partitions: Partitions,
        incremental: bool,
    ) -> None:
        self._settings = settings
        self._subs = subscriptions
        self._partitions = partitions
        self._incremental = incremental

    def on_assign(self, consumer: Consumer, tps: list[TopicPartition]) -> None:
        committed = consumer.committed(tps, timeout=METADATA_TIMEOUT_S) if tps else []
        stored = {(tp.topic, tp.partition): tp.offset for tp in committed}
        positions = self.begin(consumer, tps, stored)
        if self._incremental:
            consumer.incremental_assign(positions)
        else:
            consumer.assign(positions)

    def on_revoke(self, consumer: Consumer, tps: list[TopicPartition]) -> None:
        self._partitions.drop([(tp.topic, tp.partition) for tp in tps], commit=True)
        self._unassign(consumer, tps)

    def on_lost(self, consumer: Consumer, tps: list[TopicPartition]) -> None:
        # the partitions already belong to someone else: committing now would be refused
        self._partitions.drop([(tp.topic, tp.partition) for tp in tps], commit=False)
        self._unassign(consumer, tps)

    def _unassign(self, consumer: Consumer, tps: list[TopicPartition]) -> None:
        if self._incremental:
            consumer.incremental_unassign(tps)
        else:
            consumer.unassign()

    def begin(
        self, consumer: Consumer, tps: list[TopicPartition], stored: Mapping[Key, int]
    ) -> list[TopicPartition]:
        """Register ``tps`` and return them with their start offsets."""
        positions = start_positions(
            tps,
            stored,
            self._settings.consume_from_where,
            {self._subs.own_retry_physical},
            lambda lookups: self._by_time(consumer, lookups),
        )
        for tp in positions:
            queue = MessageQueue(self._subs.logical(tp.topic), tp.partition)
            self._partitions.add((tp.topic, tp.partition), queue, tp.offset)
        _log.info("group %s starts %s", self._settings.group, _describe(positions))
        return positions

    def _by_time(self, consumer: Consumer, tps: list[TopicPartition]) -> list[TopicPartition]:
        stamp = self._settings.consume_timestamp_ms or 0
        query = [TopicPartition(tp.topic, tp.partition, stamp) for tp in tps]
        return list(consumer.offsets_for_times(query, timeout=METADATA_TIMEOUT_S))

    def assign_all(self, consumer: Consumer, stored: Mapping[Key, int]) -> None:
        """BROADCASTING: read every partition of every subscribed topic."""
        metadata = consumer.list_topics(timeout=METADATA_TIMEOUT_S).topics
        tps = []
        for topic in self._subs.physical_topics():
            if topic not in metadata or metadata[topic].error is not None:
                _log.warning("topic %s does not exist; broadcasting consumer skips it", topic)
                continue
            tps += [TopicPartition(topic, p) for p in sorted(metadata[topic].partitions)]
        consumer.assign(self.begin(consumer, tps, stored))


def _describe(tps: list[TopicPartition]) -> str:
    return ", ".join(f"{tp.topic}[{tp.partition}]@{tp.offset}" for tp in tps)
