"""Helpers of the tests on the three-node cluster (no tests here): who leads a partition,
waiting for the replicas to catch up again after a fault."""

from __future__ import annotations

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient
from waiting import WAIT_S, wait_until

from rmqcompat.devbroker import DevCluster


def partitions(bootstrap: str, topic: str) -> dict[int, tuple[int, list[int], list[int]]]:
    """partition -> (leader, replicas, in-sync replicas) as the cluster has them now."""
    metadata = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic, timeout=10)
    found = metadata.topics[topic].partitions
    return {p: (m.leader, list(m.replicas), list(m.isrs)) for p, m in found.items()}


def leader_of(bootstrap: str, topic: str, partition: int = 0) -> int:
    """The node id leading ``topic``'s ``partition``."""
    return partitions(bootstrap, topic)[partition][0]


def all_in_sync(bootstrap: str, topic: str, replicas: int = 3) -> bool:
    """Whether every partition of ``topic`` has a leader and ``replicas`` in-sync replicas."""
    return all(
        leader >= 0 and len(isr) == replicas
        for leader, _, isr in partitions(bootstrap, topic).values()
    )


def restore(cluster: DevCluster, *topics: str, timeout: float = WAIT_S) -> None:
    """Start every node that is down, thaw frozen ones, and wait (up to ``timeout`` for
    each step) until ``topics`` are fully in sync again: a fault test leaves the shared
    cluster as it found it."""
    for node in cluster.nodes:
        if node.is_running:
            node.thaw()
        else:
            node.start()
    bootstrap = cluster.bootstrap_servers
    every = len(cluster.nodes)
    wait_until(lambda: len(_brokers(bootstrap)) == every, timeout, what="every broker")
    for topic in topics:
        wait_until(lambda t=topic: all_in_sync(bootstrap, t), timeout, what=f"{topic} in sync")


def committed_and_ends(bootstrap: str, group_id: str, topics: list[str]) -> list[str]:
    """``topic[partition]=committed/end`` for every partition of ``topics``."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group_id})
    try:
        out = []
        for topic in topics:
            found = consumer.list_topics(topic, timeout=10).topics[topic].partitions
            tps = [TopicPartition(topic, p) for p in sorted(found)]
            for tp in consumer.committed(tps, timeout=10):
                end = consumer.get_watermark_offsets(tp, timeout=10)[1]
                out.append(f"{topic}[{tp.partition}]={tp.offset}/{end}")
        return out
    finally:
        consumer.close()


def _brokers(bootstrap: str) -> dict[int, object]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    return dict(admin.list_topics(timeout=10).brokers)
