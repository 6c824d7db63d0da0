"""Committing delivered prefixes and reporting lag, for the partitions the loop owns.

Commits are asynchronous every ``interval_ms`` while running (a lost async commit only
means a record may be forwarded again) and synchronous on revoke and close, so the
next owner starts after everything this instance delivered.
"""

from __future__ import annotations

import logging

from confluent_kafka import Consumer, KafkaException, TopicPartition

from rmqcompat.forwarder.commit_tracker import CommitTracker
from rmqcompat.forwarder.metrics import ForwarderMetrics
from rmqcompat.forwarder.settings import LevelTopic

log = logging.getLogger(__name__)

Key = tuple[str, int]


class Committer:
    """Not thread-safe: the poll thread (and the rebalance callbacks it runs) calls it."""

    def __init__(
        self,
        consumer: Consumer,
        tracker: CommitTracker[Key],
        metrics: ForwarderMetrics,
        level_topics: dict[str, LevelTopic],
        interval_ms: int,
    ) -> None:
        self._consumer = consumer
        self._tracker = tracker
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
        positions = self._tracker.to_commit()
        offsets = [TopicPartition(*key, positions[key]) for key in keys if key in positions]
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
            self._tracker.partitions[(tp.topic, tp.partition)].committed(tp.offset)

    def update_lag(self) -> None:
        lag: dict[str, int] = {t.label: 0 for t in self._level_topics.values()}
        for key, state in self._tracker.partitions.items():
            _, high = self._consumer.get_watermark_offsets(TopicPartition(*key), cached=True)
            if state.last_tracked is not None and high >= 0:
                unread = max(0, high - state.last_tracked - 1)
                lag[self._level_topics[key[0]].label] += unread + state.pending
        for label, value in lag.items():
            self._metrics.parked.labels(label).set(value)
