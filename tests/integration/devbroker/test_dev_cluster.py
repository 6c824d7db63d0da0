"""The three-node Apache Kafka dev cluster: one cluster of three brokers, each serving on its
own; a killed node comes back with its data while the other two go on; a kept data
directory brings the whole cluster back."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from cluster_helpers import all_in_sync, leader_of, restore
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient
from waiting import wait_until

from rmqcompat.devbroker import DevCluster
from rmqcompat.topics.provision import ensure_topics
from rmqcompat.topics.spec import REPLICATED, TopicSpec

RECORDS = 200


def test_three_nodes_form_one_cluster_and_each_serves_it(kafka_cluster: DevCluster) -> None:
    addresses = kafka_cluster.bootstrap_servers.split(",")
    assert len(addresses) == 3
    for address in addresses:
        metadata = AdminClient({"bootstrap.servers": address}).list_topics(timeout=10)
        assert sorted(metadata.brokers) == [1, 2, 3]
    topic = f"replicated-{uuid.uuid4().hex[:8]}"
    _create(kafka_cluster.bootstrap_servers, topic)
    wait_until(lambda: all_in_sync(kafka_cluster.bootstrap_servers, topic), what="3 in sync")


def test_a_killed_leader_comes_back_with_its_data_while_two_nodes_go_on(
    kafka_cluster: DevCluster,
) -> None:
    bootstrap = kafka_cluster.bootstrap_servers
    topic = f"killed-{uuid.uuid4().hex[:8]}"
    _create(bootstrap, topic)
    _produce(bootstrap, topic, range(RECORDS // 2))
    leader = kafka_cluster.node(leader_of(bootstrap, topic))
    try:
        leader.kill()
        _produce(bootstrap, topic, range(RECORDS // 2, RECORDS))  # acks=all, 2 of 3 in sync
        leader.start()
        wait_until(lambda: all_in_sync(bootstrap, topic), what="the node back in sync")
    finally:
        restore(kafka_cluster, topic)

    assert _read(bootstrap, topic) == [str(i).encode() for i in range(RECORDS)]


@pytest.mark.slow
@pytest.mark.usefixtures("kafka_clusters_run")
def test_a_kept_data_dir_brings_the_cluster_back_with_its_topics(tmp_path: Path) -> None:
    topic = "kept"
    with DevCluster(3, data_dir=tmp_path) as first:
        _create(first.bootstrap_servers, topic)
        _produce(first.bootstrap_servers, topic, range(10))

    assert sorted(p.name for p in tmp_path.iterdir()) == ["node-1", "node-2", "node-3"]
    with DevCluster(3, data_dir=tmp_path) as second:
        assert _read(second.bootstrap_servers, topic) == [str(i).encode() for i in range(10)]


def _create(bootstrap: str, topic: str) -> None:
    spec = TopicSpec(1, REPLICATED)
    ensure_topics({"bootstrap.servers": bootstrap}, {topic: spec})


def _produce(bootstrap: str, topic: str, numbers: range) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for i in numbers:
        producer.produce(topic, str(i).encode())
    assert producer.flush(60) == 0


def _read(bootstrap: str, topic: str) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": uuid.uuid4().hex})
    consumer.assign([TopicPartition(topic, 0, 0)])
    values: list[bytes] = []
    try:
        end = _end_offset(consumer, topic)
        wait_until(lambda: _more(consumer, values) >= end, what=f"{end} records of {topic}")
    finally:
        consumer.close()
    return values


def _end_offset(consumer: Consumer, topic: str) -> int:
    """The end of ``topic``'s partition 0, once its leader knows it: a leader elected after
    a restart answers OFFSET_NOT_AVAILABLE until its high watermark has caught up (seen in
    CI after the whole cluster came back from a kept data directory)."""
    ends: list[int] = []

    def known() -> bool:
        try:
            ends.append(consumer.get_watermark_offsets(TopicPartition(topic, 0), 10, False)[1])
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.OFFSET_NOT_AVAILABLE:
                raise
        return bool(ends)

    wait_until(known, what=f"the leader of {topic} to know its high watermark")
    return ends[0]


def _more(consumer: Consumer, values: list[bytes]) -> int:
    values += [m.value() for m in consumer.consume(500, 0.2) if m.error() is None]
    return len(values)
