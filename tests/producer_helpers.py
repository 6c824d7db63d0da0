"""Helpers of the producer integration tests (no tests here): topics, a reader to EOF."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition
from confluent_kafka import Message as KafkaMessage

from rmqcompat import properties as props
from rmqcompat.topics.provision import ensure_topics
from rmqcompat.topics.spec import TopicSpec

#: Safety net only: a test waiting longer than this has failed (no timing is asserted).
GIVE_UP_S = 60.0


def create_topic(bootstrap: str, topic: str, namespace: str, partitions: int) -> None:
    ensure_topics({"bootstrap.servers": bootstrap}, {topic: TopicSpec(partitions)}, namespace)


def read_to_eof(
    bootstrap: str, physical: str, overrides: Mapping[str, Any] | None = None
) -> list[KafkaMessage]:
    """Every record of ``physical`` from the beginning up to the end-of-partition events.

    Uses the EOF event rather than ListOffsets "latest", which is right on Apache Kafka and
    on Tansu alike.
    """
    settings = {
        "bootstrap.servers": bootstrap,
        "group.id": "producer-test-reader",
        "enable.auto.commit": False,
        "enable.partition.eof": True,
        "fetch.wait.max.ms": 50,
    }
    consumer = Consumer({**settings, **(overrides or {})})
    try:
        topic = consumer.list_topics(physical, timeout=10).topics[physical]
        partitions = list(topic.partitions)
        consumer.assign([TopicPartition(physical, p, OFFSET_BEGINNING) for p in partitions])
        return _poll_until_eof(consumer, set(partitions))
    finally:
        consumer.close()


def _poll_until_eof(consumer: Consumer, waiting: set[int]) -> list[KafkaMessage]:
    records: list[KafkaMessage] = []
    deadline = time.monotonic() + GIVE_UP_S
    while waiting:
        if time.monotonic() > deadline:
            raise AssertionError(f"no end-of-partition event for partitions {waiting}")
        record = consumer.poll(0.2)
        if record is None:
            continue
        error = record.error()
        if error is None:
            records.append(record)
        elif error.code() == KafkaError._PARTITION_EOF:
            waiting.discard(record.partition())
        else:
            raise AssertionError(f"consume error: {error}")
    return records


def headers_of(record: KafkaMessage) -> dict[str, str]:
    return props.from_headers(record.headers())


def by_msg_id(records: list[KafkaMessage]) -> dict[str, KafkaMessage]:
    return {headers_of(r)[props.UNIQ_KEY]: r for r in records}
