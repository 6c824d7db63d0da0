"""A SimpleConsumer group's attempt log on Kafka: ``%ATTEMPT%<group>``, compacted.

Each member writes its :class:`~rmqcompat.v5.attempts.Held` snapshot keyed by its member
id: one produce and flush per ``receive`` that returned messages, one produce without
waiting per ``ack`` (so an acked message whose offset is not committed yet is not counted
as a lost attempt should the member die now), and a tombstone when it
shuts down cleanly (its held messages were given back through the retry path, counted).
A member assigned a partition reads the records it has not read yet up to the log's end
into its :class:`~rmqcompat.v5.attempts.AttemptBook`. See :mod:`rmqcompat.v5.attempts`.
"""

from __future__ import annotations

import logging
import threading

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka import Message as KafkaMessage

from rmqcompat.errors import BrokerUnreachableError
from rmqcompat.keyed_topic import TopicReader, write_and_wait
from rmqcompat.producer_id import new_idempotent_producer
from rmqcompat.reachability import require_broker
from rmqcompat.topics.naming import attempt_topic, to_kafka_topic
from rmqcompat.topics.topology import attempt_topology, provision_topology
from rmqcompat.v5.attempts import AttemptBook
from rmqcompat.v5.config import ClientConfiguration
from rmqcompat.wire import Key

_log = logging.getLogger("rmqcompat.v5")


def _log_failure(err: KafkaError | None, msg: KafkaMessage) -> None:
    if err is not None:
        _log.warning("attempt log %s: a snapshot was not written: %s", msg.topic(), err)


class AttemptLog:
    """This member's writer and reader of its group's attempt log (see the module doc)."""

    def __init__(self, config: ClientConfiguration, group: str, member: str) -> None:
        """Create the log when missing and connect to it.

        Raises:
            BrokerUnreachableError: no broker answered. TopologyError: not creatable.
        """
        client = config.client
        self.member = member
        self._timeout_s = float(config.request_timeout)
        self._topic = to_kafka_topic(attempt_topic(group), client.namespace)
        require_broker(client)
        provision_topology(
            client.librdkafka("admin"),
            attempt_topology(
                group, namespace=client.namespace, max_message_size=client.max_message_size
            ),
        )
        self._producer = new_idempotent_producer(
            client.librdkafka("producer", **{"acks": "all", "enable.idempotence": True})
        )
        self._book = AttemptBook(member)
        self._read_lock = threading.Lock()
        self._reader = TopicReader(
            client.librdkafka("consumer"), self._topic, self._apply, self._timeout_s
        )

    def write_later(self, value: bytes) -> None:
        """Write this member's snapshot without waiting (a failure is logged): a later
        snapshot, or this member's next :meth:`write`, supersedes it."""
        self._producer.produce(self._topic, value, self.member.encode(), on_delivery=_log_failure)
        self._producer.poll(0)

    def write(self, value: bytes | None) -> None:
        """Write this member's snapshot (``None``: its tombstone) and wait for Kafka.

        Raises:
            BrokerUnreachableError: Kafka did not acknowledge it within the request timeout.
        """
        key = self.member.encode()
        failure = write_and_wait(self._producer, self._topic, key, value, self._timeout_s)
        if failure is not None:
            raise BrokerUnreachableError(f"attempt log {self._topic} write failed: {failure}")

    def lost_attempts(self, key: Key) -> dict[int, int]:
        """Offset -> highest attempt other members handed out in partition ``key``, read up
        to the log's end now (called when the partition is assigned). A log that cannot be
        read leaves the attempts as the records carry them (logged). Thread-safe: each
        subscribed topic's core consumer calls it from its own poll thread."""
        with self._read_lock:
            try:
                if not self._reader.catch_up():
                    _log.warning("attempt log %s read only in part: Kafka was slow", self._topic)
            except KafkaException as exc:
                _log.warning("attempt log %s unreadable, attempts not kept: %s", self._topic, exc)
            return self._book.attempts(key)

    def close(self) -> None:
        """Write this member's tombstone (best effort, logged) and close both clients."""
        try:
            self.write(None)
        except BrokerUnreachableError as exc:
            _log.warning("%s", exc)
        self._reader.close()

    def _apply(self, key: bytes | None, value: bytes | None, offset: int) -> None:
        try:
            self._book.apply(key.decode() if key else "", value)
        except (ValueError, UnicodeDecodeError) as exc:
            _log.warning("attempt log %s offset %s skipped: %s", self._topic, offset, exc)
