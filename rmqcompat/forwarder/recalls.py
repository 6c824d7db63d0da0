"""Recalled timer messages: the delay forwarder drops them instead of releasing them.

``Producer.recall_message`` (RocketMQ 5.5) writes one record to ``RMQ_SYS_RECALL_TOPIC``
per recall: key = the message id, value = its delivery time (epoch ms, as the recall
handle carries it). Every forwarder reads that topic whole (no group: each needs every
recall, whichever level partitions it owns): up to its end when it starts, so a recall
survives a forwarder restart, then whatever is new before each pass over its due
records. A timer message whose id was recalled is dropped at its next hop or at its
release (its offset is finished as if it was forwarded). The check is one lookup in a
dict that is empty unless something was recalled.

A recall written while the forwarder is releasing that very message (its due time is
milliseconds away) can lose the race: the message is delivered.
"""

from __future__ import annotations

import logging

from rmqcompat.config import ClientConfig
from rmqcompat.keyed_topic import TopicReader
from rmqcompat.topics.naming import RECALL_TOPIC, to_kafka_topic

log = logging.getLogger(__name__)

#: A recall is forgotten this long after its message was due (it cannot come any more).
_FORGET_AFTER_MS = 3600_000
#: How long a starting forwarder may take to read the recalls before it goes on.
_CATCH_UP_S = 30.0


class Recalled:
    """Message id -> delivery time of recalled messages (pure)."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}

    def add(self, key: bytes | None, value: bytes | None, offset: int = -1) -> None:
        """One recall record; a record that is not one is logged and skipped."""
        try:
            msg_id = key.decode() if key else ""
            due_ms = int(value or b"")
        except (UnicodeDecodeError, ValueError):
            log.warning("recall record at offset %s skipped: key %r, value %r", offset, key, value)
            return
        if msg_id:
            self.ids[msg_id] = due_ms

    def forget_before(self, now_ms: int) -> None:
        """Drop the recalls of messages due long ago."""
        stale = [i for i, due in self.ids.items() if due < now_ms - _FORGET_AFTER_MS]
        for msg_id in stale:
            del self.ids[msg_id]


class RecallReader:
    """The namespace's recall topic read into a :class:`Recalled` (poll thread only)."""

    def __init__(self, config: ClientConfig) -> None:
        """Read every recall so far. Raises KafkaException (the topic is unreadable)."""
        self.recalled = Recalled()
        topic = to_kafka_topic(RECALL_TOPIC, config.namespace)
        settings = config.librdkafka("consumer")
        self._reader = TopicReader(settings, topic, self.recalled.add, _CATCH_UP_S)
        if not self._reader.catch_up():
            log.warning("recall topic %s read only in part at start: Kafka was slow", topic)

    def refresh(self) -> None:
        """Take in the recalls that arrived (never blocks)."""
        self._reader.poll()

    def close(self) -> None:
        self._reader.close()
