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
import time
import uuid

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka import Message as KafkaMessage

from rmqcompat.errors import BrokerUnreachableError
from rmqcompat.reachability import require_broker
from rmqcompat.topics.naming import attempt_topic, to_kafka_topic
from rmqcompat.topics.topology import attempt_topology, provision_topology
from rmqcompat.v5.attempts import AttemptBook
from rmqcompat.v5.config import ClientConfiguration
from rmqcompat.wire import Key

_log = logging.getLogger("rmqcompat.v5")

#: How long a catch-up read may take before the member goes on with what it read.
_CATCH_UP_S = 10.0


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
        self._producer = Producer(
            client.librdkafka("producer", **{"acks": "all", "enable.idempotence": True})
        )
        self._reader = Consumer(
            client.librdkafka(
                "consumer",
                **{
                    "group.id": f"rmqcompat-attempt-reader-{uuid.uuid4().hex}",
                    "enable.auto.commit": False,
                    "auto.offset.reset": "earliest",
                },
            )
        )
        self._book = AttemptBook(member)
        self._assigned: list[int] | None = None

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
        failed: list[KafkaError] = []

        def on_delivery(err: KafkaError | None, _msg: KafkaMessage) -> None:
            if err is not None:
                failed.append(err)

        self._producer.produce(self._topic, value, self.member.encode(), on_delivery=on_delivery)
        if self._producer.flush(self._timeout_s) > 0 or failed:
            cause = failed[0] if failed else "no acknowledgement"
            raise BrokerUnreachableError(f"attempt log {self._topic} write failed: {cause}")

    def lost_attempts(self, key: Key) -> dict[int, int]:
        """Offset -> highest attempt other members handed out in partition ``key``, read up
        to the log's end now (called when the partition is assigned). A log that cannot be
        read leaves the attempts as the records carry them (logged)."""
        try:
            self._catch_up()
        except KafkaException as exc:
            _log.warning("attempt log %s unreadable, attempts not restored: %s", self._topic, exc)
        return self._book.attempts(key)

    def close(self) -> None:
        """Write this member's tombstone (best effort, logged) and close both clients."""
        try:
            self.write(None)
        except BrokerUnreachableError as exc:
            _log.warning("%s", exc)
        self._reader.close()

    def _catch_up(self) -> None:
        if self._assigned is None:
            meta = self._reader.list_topics(self._topic, timeout=self._timeout_s)
            self._assigned = sorted(meta.topics[self._topic].partitions)
            self._reader.assign([TopicPartition(self._topic, p, 0) for p in self._assigned])
        ends = {}
        for p in self._assigned:
            low, high = self._reader.get_watermark_offsets(
                TopicPartition(self._topic, p), timeout=self._timeout_s, cached=False
            )
            if high > low:
                ends[p] = high
        deadline = time.monotonic() + _CATCH_UP_S
        while ends and not self._read_to(ends):
            if time.monotonic() >= deadline:
                _log.warning("attempt log %s read only in part: Kafka was slow", self._topic)
                return
            msg = self._reader.poll(0.1)
            if msg is None or msg.error() is not None:
                continue
            key = msg.key()
            try:
                self._book.apply(key.decode() if key else "", msg.value())
            except (ValueError, UnicodeDecodeError) as exc:
                _log.warning("attempt log %s offset %s skipped: %s", self._topic, msg.offset(), exc)

    def _read_to(self, ends: dict[int, int]) -> bool:
        tps = [TopicPartition(self._topic, p) for p in ends]
        positions = self._reader.position(tps)
        return all(tp.offset >= end for tp, end in zip(positions, ends.values(), strict=True))
