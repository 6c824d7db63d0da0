"""The session broker round-trips records with headers through a consumer group."""

from __future__ import annotations

import time
from collections.abc import Callable

from confluent_kafka import Consumer, Message, Producer
from confluent_kafka.admin import AdminClient, NewTopic

RECORD_COUNT = 100
PARTITIONS = 3
Headers = list[tuple[str, str | bytes | None]]
# A bound so a broken group fails with what was received instead of hanging until timeout.
CONSUME_DEADLINE_S = 60


def test_records_and_headers_round_trip_through_a_group(
    kafka_bootstrap: str,
    client_overrides: dict[str, str | int],
    unique_name: Callable[[str], str],
) -> None:
    topic = unique_name("roundtrip")
    _create_topic(kafka_bootstrap, topic)
    sent = {_key(i): _headers(i) for i in range(RECORD_COUNT)}
    _produce(kafka_bootstrap, topic, sent)

    received = _consume(kafka_bootstrap, topic, unique_name("group"), client_overrides)

    assert {msg.key(): msg.headers() for msg in received} == sent
    assert len(received) == RECORD_COUNT
    assert all(msg.value() == _value(msg.key()) for msg in received)


def _key(i: int) -> bytes:
    return f"key-{i}".encode()


def _value(key: bytes | None) -> bytes:
    return b"value-" + (key or b"")


def _headers(i: int) -> Headers:
    # Duplicate names, binary values and a null value: all must survive the round trip.
    return [("attempt", str(i).encode()), ("attempt", b"\x00\xff"), ("empty", None)]


def _create_topic(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(topic, num_partitions=PARTITIONS)])
    futures[topic].result(timeout=30)


def _produce(bootstrap: str, topic: str, records: dict[bytes, Headers]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for key, headers in records.items():
        producer.produce(topic, key=key, value=_value(key), headers=headers)
    assert producer.flush(30) == 0


def _consume(
    bootstrap: str, topic: str, group: str, overrides: dict[str, str | int]
) -> list[Message]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            **overrides,
        }
    )
    consumer.subscribe([topic])
    received: list[Message] = []
    deadline = time.monotonic() + CONSUME_DEADLINE_S
    try:
        while len(received) < RECORD_COUNT and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            received.append(msg)
    finally:
        consumer.close()
    return received
