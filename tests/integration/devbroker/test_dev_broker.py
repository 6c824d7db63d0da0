"""The session broker round-trips records through a group; each dev broker kind restarts
as documented (Tansu empty, Apache Kafka and noida-db with their data)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from rmqcompat.devbroker import (
    DEV_BROKER_KINDS,
    DevBroker,
    DevBrokerKind,
    DevBrokerUnavailableError,
)
from rmqcompat.devbroker.kinds import flavour

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


KEEPS_DATA = [kind for kind in DEV_BROKER_KINDS if flavour(kind).keeps_data]


@contextmanager
def _running(kind: DevBrokerKind, data_dir: Path | None = None) -> Iterator[DevBroker]:
    broker = DevBroker(kind=kind, data_dir=data_dir)
    try:
        broker.start()
    except DevBrokerUnavailableError as exc:  # e.g. no Java here: says what is missing
        pytest.skip(str(exc))
    try:
        yield broker
    finally:
        broker.stop()


@pytest.mark.parametrize("kind", DEV_BROKER_KINDS)
def test_restart_keeps_topics_only_on_a_broker_that_keeps_data(
    kind: DevBrokerKind, unique_name: Callable[[str], str]
) -> None:
    topic = unique_name("kept")
    with _running(kind) as broker:
        _create_topic(broker.bootstrap_servers, topic)

        broker.restart()

        assert (topic in _topics(broker.bootstrap_servers)) == (kind in KEEPS_DATA)


@pytest.mark.parametrize("kind", KEEPS_DATA)
def test_a_given_data_dir_is_reused_and_left_in_place(
    kind: DevBrokerKind, tmp_path: Path, unique_name: Callable[[str], str]
) -> None:
    topic = unique_name("kept")
    with _running(kind, tmp_path) as first:
        _create_topic(first.bootstrap_servers, topic)
        _produce(first.bootstrap_servers, topic, {_key(0): _headers(0)})

    with _running(kind, tmp_path) as second:
        assert topic in _topics(second.bootstrap_servers)
        assert _end_offsets(second.bootstrap_servers, topic) == 1
    assert any(tmp_path.iterdir())


@pytest.mark.parametrize("kind", KEEPS_DATA)
def test_the_temporary_data_dir_is_removed_on_stop(kind: DevBrokerKind) -> None:
    with _running(kind) as broker:
        data_dir = broker.data_dir
        assert data_dir is not None and data_dir.is_dir()

    assert not data_dir.exists()
    assert broker.data_dir is None
    assert broker.pid is None


def test_only_a_broker_that_keeps_data_takes_a_data_dir(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="keeps no data"):
        DevBroker(kind="tansu", data_dir=tmp_path)


def _end_offsets(bootstrap: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "end-offsets"})
    try:
        metadata = consumer.list_topics(topic, timeout=10).topics[topic]
        ends = [
            consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
            for p in metadata.partitions
        ]
    finally:
        consumer.close()
    return sum(ends)


def _topics(bootstrap: str) -> set[str]:
    return set(AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).topics)
