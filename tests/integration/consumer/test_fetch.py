"""A fetch hands over the records that are there instead of waiting for a full batch."""

from __future__ import annotations

import time
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from rmqcompat.fetch import fetch


def test_a_lone_record_is_returned_without_waiting_for_the_batch_or_the_timeout(
    kafka_bootstrap: str, client_overrides: dict[str, Any], unique_name: Any
) -> None:
    topic = unique_name("fetch")
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    admin.create_topics([NewTopic(topic, 1)])[topic].result()
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    producer.produce(topic, b"only")
    assert producer.flush(30) == 0
    consumer = Consumer(
        {"bootstrap.servers": kafka_bootstrap, "group.id": unique_name("g"), **client_overrides}
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    try:
        timeout_s = 20.0
        started = time.monotonic()
        records = fetch(consumer, 500, timeout_s)
        waited = time.monotonic() - started
        # consume(500, 20.0) would only return after the whole 20 s with this one record.
        assert [r.value() for r in records] == [b"only"]
        assert waited < timeout_s / 2
        assert fetch(consumer, 500, 0.2) == []
    finally:
        consumer.close()
