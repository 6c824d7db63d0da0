"""Committing delivered prefixes and reporting lag, for the partitions the loop owns.

Commits are asynchronous every ``interval_ms`` while running (a lost async commit only
means a record may be forwarded again) and synchronous on revoke and close, so the
next owner starts after everything this instance delivered.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from confluent_kafka import Consumer, KafkaException, TopicPartition

from rmqcompat.forwarder.metrics import ForwarderMetrics
from rmqcompat.forwarder.owned import OwnedPartition
from rmqcompat.forwarder.settings import LevelTopic
from rmqcompat.wire import Key

log = logging.getLogger(__name__)


class Committer:
    """Not thread-safe: the poll thread (and the rebalance callbacks it runs) calls it.

    ``owned`` is the loop's own map of owned partitions (it adds and removes them); the
    position to commit is each one's :meth:`~ProcessQueue.commit_offset`, written when it
    moved past the last one committed here.
    """

    def __init__(
        self,
        consumer: Consumer,
        owned: Mapping[Key, OwnedPartition],
        metrics: ForwarderMetrics,
        level_topics: dict[str, LevelTopic],
        interval_ms: int,
    ) -> None:
        self._consumer = consumer
        self._owned = owned
        self._committed: dict[Key, int] = {}
        self._metrics = metrics
        self._level_topics = level_topics
        self._interval_ms = interval_ms
        self._next_ms = 0

    def due(self, now_ms: int) -> bool:
        """True once per interval: time to :meth:`commit` and :meth:`update_lag`."""
        if now_ms < self._next_ms:
            return False
        self._next_ms = now_ms + self._interval_ms
        return True

    def commit(self, keys: list[Key], asynchronous: bool) -> None:
        offsets = []
        for key in keys:
            part = self._owned.get(key)
            position = None if part is None else part.lane.state.commit_offset()
            if position is not None and position > self._committed.get(key, -1):
                offsets.append(TopicPartition(*key, position))
        if not offsets:
            return
        try:
            if asynchronous:
                self._consumer.commit(offsets=offsets, asynchronous=True)
            else:
                self._consumer.commit(offsets=offsets, asynchronous=False)
        except KafkaException as exc:
            # Not fatal: the records stay uncommitted and may be forwarded again (at least once).
            log.warning("forwarder commit failed: %s", exc)
            return
        for tp in offsets:
            self._committed[(tp.topic, tp.partition)] = tp.offset

    def forget(self, key: Key) -> None:
        """``key`` was revoked or lost: a later owner's positions start afresh."""
        self._committed.pop(key, None)

    def update_lag(self) -> None:
        lag: dict[str, int] = {t.label: 0 for t in self._level_topics.values()}
        for key, part in self._owned.items():
            _, high = self._consumer.get_watermark_offsets(TopicPartition(*key), cached=True)
            pq = part.lane.state
            if pq.highest_seen >= 0 and high >= 0:
                unread = max(0, high - pq.highest_seen - 1)
                lag[part.lane.label] += unread + pq.count
        for label, value in lag.items():
            self._metrics.parked.labels(label).set(value)
