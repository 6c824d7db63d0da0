"""Helpers of the forwarder integration tests (no tests here): park records, read topics."""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from typing import Any

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    Message,
    Producer,
    TopicPartition,
)

from rmqcompat import parking
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.provision import ensure_topics
from rmqcompat.topics.spec import TopicSpec

#: Safety net only: a test that waits longer than this has failed (no timing is asserted).
GIVE_UP_S = 60.0


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def create_topics(bootstrap: str, namespace: str, specs: Mapping[str, TopicSpec]) -> None:
    ensure_topics({"bootstrap.servers": bootstrap}, dict(specs), namespace)


def create_levels(bootstrap: str, namespace: str, levels: DelayLevels, partitions: int) -> None:
    create_topics(bootstrap, namespace, {t: TopicSpec(partitions) for t in levels.topics()})


def park_many(
    bootstrap: str,
    namespace: str,
    levels: DelayLevels,
    items: list[dict[str, Any]],
) -> list[int]:
    """Park each item (keys: value, level, real_topic, props, parked_at, partition, key).

    Returns the DUE_TIME of each parked record.
    """
    producer = Producer({"bootstrap.servers": bootstrap})
    dues = []
    for item in items:
        record = parking.park(
            item["value"],
            item.get("key"),
            item.get("props", {}),
            real_topic=item["real_topic"],
            level=item["level"],
            levels=levels,
            namespace=namespace,
            now_ms=item.get("parked_at", now_ms()),
        )
        dues.append(int(dict(record.headers)["DUE_TIME"]))
        extra = {"partition": item["partition"]} if "partition" in item else {}
        producer.produce(record.topic, record.value, record.key, headers=record.headers, **extra)
    assert producer.flush(30) == 0
    return dues


def produce_raw(bootstrap: str, topic: str, records: list[dict[str, Any]]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for record in records:
        producer.produce(topic, **record)
    assert producer.flush(30) == 0


def read(
    bootstrap: str,
    topic: str,
    overrides: Mapping[str, Any],
    count: int | None = None,
) -> list[Message]:
    """Read ``topic`` from its start: ``count`` records, or (None) up to each partition's end."""
    consumer = Consumer(
        {
            **overrides,
            "bootstrap.servers": bootstrap,
            "group.id": "reader-" + uuid.uuid4().hex,
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
    out: list[Message] = []
    at_end: set[int] = set()
    deadline = time.monotonic() + GIVE_UP_S
    try:
        while time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    at_end.add(msg.partition())
                    if count is None and at_end == set(partitions):
                        return out
                continue
            at_end.discard(msg.partition())
            out.append(msg)
            if count is not None and len(out) >= count:
                return out
        raise AssertionError(f"gave up reading {topic}: got {len(out)} of {count} records")
    finally:
        consumer.close()


def metric(forwarder, name: str, **labels: str) -> float:
    value = forwarder.metrics.registry.get_sample_value(name, labels or None)
    return value or 0.0
