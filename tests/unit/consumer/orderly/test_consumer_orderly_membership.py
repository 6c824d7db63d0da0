"""The revoke hook orderly consumption relies on: it runs before the revoked partitions'
offsets are committed and dropped, so what the running call finished is committed."""

from __future__ import annotations

import pytest
from confluent_kafka import TopicPartition

from rmqcompat.config import ClientConfig
from rmqcompat.consumer.membership import Membership
from rmqcompat.consumer.partitions import Partitions
from rmqcompat.consumer.settings import ConsumerSettings
from rmqcompat.consumer.subscriptions import Subscriptions
from rmqcompat.message import MessageQueue


class Consumer:
    def __init__(self) -> None:
        self.unassigned = 0

    def unassign(self) -> None:
        self.unassigned += 1


def test_before_revoke_runs_before_the_commit_and_the_drop():
    settings = ConsumerSettings("g", ClientConfig("127.0.0.1:1"))
    events: list = []
    partitions = Partitions(settings, lambda offsets, asynchronous: events.append(offsets))
    partitions.add(("T", 0), MessageQueue("T", 0), 5)
    partitions.get(("T", 0)).pq.add(5, 1)
    membership = Membership(settings, Subscriptions("g", ""), partitions, incremental=False)

    def before_revoke(keys):
        events.append(("hook", keys, ("T", 0) in partitions.keys()))
        partitions.get(("T", 0)).pq.remove(5)  # the running call finished meanwhile

    membership.before_revoke = before_revoke
    consumer = Consumer()
    membership.on_revoke(consumer, [TopicPartition("T", 0)])

    assert events == [("hook", [("T", 0)], True), {("T", 0): 6}]
    assert partitions.keys() == [] and consumer.unassigned == 1


def test_the_partitions_are_dropped_and_unassigned_even_if_the_hook_raises():
    settings = ConsumerSettings("g", ClientConfig("127.0.0.1:1"))
    partitions = Partitions(settings, lambda offsets, asynchronous: None)
    partitions.add(("T", 0), MessageQueue("T", 0), 5)
    membership = Membership(settings, Subscriptions("g", ""), partitions, incremental=False)

    def broken(keys):
        raise RuntimeError("bug")

    membership.before_revoke = broken
    consumer = Consumer()
    with pytest.raises(RuntimeError):
        membership.on_revoke(consumer, [TopicPartition("T", 0)])
    assert partitions.keys() == [] and consumer.unassigned == 1
