"""Partitions are routed (the direct fetch forwards their queues) before they are assigned,
on every path that assigns: a partition's records fetched before its forward would go to
the consumer's own queue instead (``rmqcompat.consumer.fetcher``)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from confluent_kafka import TopicPartition

from rmqcompat.config import ClientConfig
from rmqcompat.consumer.listener import ConsumeFromWhere, MessageModel
from rmqcompat.consumer.membership import Membership
from rmqcompat.consumer.partitions import Partitions
from rmqcompat.consumer.settings import ConsumerSettings
from rmqcompat.consumer.subscriptions import Subscriptions

CLIENT = ClientConfig("127.0.0.1:1")


class OrderRecordingConsumer:
    """Answers the start lookups of a partition with two records and none committed;
    records the calls that route or assign, in order."""

    def __init__(self, calls: list[tuple[str, list[tuple[str, int]]]]) -> None:
        self.calls = calls
        self.partitions = 2

    def committed(self, tps: list[TopicPartition], timeout: float) -> list[TopicPartition]:
        return [TopicPartition(tp.topic, tp.partition, -1001) for tp in tps]

    def get_watermark_offsets(self, tp: Any, timeout: float, cached: bool) -> tuple[int, int]:
        return (0, 2)

    def offsets_for_times(self, tps: list[TopicPartition], timeout: float) -> list[Any]:
        return [TopicPartition(tp.topic, tp.partition, -1) for tp in tps]

    def list_topics(self, topic: str | None = None, timeout: float = 0) -> Any:
        meta = SimpleNamespace(error=None, partitions=dict.fromkeys(range(self.partitions)))
        return SimpleNamespace(topics={"T": meta})

    def assign(self, tps: list[TopicPartition]) -> None:
        self.calls.append(("assign", _keys(tps)))

    def incremental_assign(self, tps: list[TopicPartition]) -> None:
        self.calls.append(("assign", _keys(tps)))

    def resume(self, tps: list[TopicPartition]) -> None:
        pass


def _keys(tps: list[TopicPartition]) -> list[tuple[str, int]]:
    return [(tp.topic, tp.partition) for tp in tps]


def _membership(
    tmp_path: Any, model: MessageModel, incremental: bool
) -> tuple[Membership, OrderRecordingConsumer]:
    settings = ConsumerSettings(
        "g",
        CLIENT,
        model,
        ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET,
        offset_store_dir=tmp_path,
    )
    subs = Subscriptions("g", "")
    subs.add("T", "*")
    partitions = Partitions(settings, lambda offsets, asynchronous: None)
    membership = Membership(settings, subs, partitions, incremental)
    calls: list[tuple[str, list[tuple[str, int]]]] = []
    membership.before_assign = lambda tps: calls.append(("route", _keys(tps)))
    return membership, OrderRecordingConsumer(calls)


@pytest.mark.parametrize("incremental", [False, True])
def test_a_group_assignment_is_routed_before_it_is_assigned(tmp_path, incremental):
    membership, consumer = _membership(tmp_path, MessageModel.CLUSTERING, incremental)
    tps = [TopicPartition("T", 0), TopicPartition("T", 1)]
    membership.on_assign(consumer, tps)  # type: ignore[arg-type]
    both = [("T", 0), ("T", 1)]
    assert consumer.calls == [("route", both), ("assign", both)]


def test_a_broadcasting_consumer_routes_every_partition_before_it_assigns_them(tmp_path):
    membership, consumer = _membership(tmp_path, MessageModel.BROADCASTING, False)
    membership.assign_all(consumer, {})  # type: ignore[arg-type]
    both = [("T", 0), ("T", 1)]
    assert consumer.calls == [("route", both), ("assign", both)]
    consumer.calls.clear()
    membership.rediscover(consumer)  # type: ignore[arg-type]
    assert consumer.calls == []  # nothing new
    consumer.partitions = 3
    membership.rediscover(consumer)  # type: ignore[arg-type]
    assert consumer.calls == [("route", [("T", 2)]), ("assign", [("T", 2)])]
