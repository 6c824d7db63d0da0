"""BROADCASTING rediscovery: which partitions are new, and the periodic refresh."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from rmqcompat.config import ClientConfig
from rmqcompat.consumer.listener import ConsumeFromWhere, MessageModel
from rmqcompat.consumer.membership import Membership, new_partitions
from rmqcompat.consumer.partitions import Partitions
from rmqcompat.consumer.settings import ConsumerSettings
from rmqcompat.consumer.subscriptions import Subscriptions
from rmqcompat.errors import ConfigError

CLIENT = ClientConfig("127.0.0.1:1")


def _keys(tps):
    return [(tp.topic, tp.partition) for tp in tps]


def test_new_partitions_are_those_not_known_sorted():
    found = {"b": [1, 0], "a": {2: None, 0: None, 1: None}}
    known = {("a", 0), ("b", 0)}
    assert _keys(new_partitions(found, known)) == [("a", 1), ("a", 2), ("b", 1)]


def test_new_partitions_none_when_nothing_changed():
    assert new_partitions({"a": [0, 1]}, {("a", 0), ("a", 1)}) == []
    assert new_partitions({}, {("a", 0)}) == []


def test_a_topic_that_appeared_is_new_entirely():
    assert _keys(new_partitions({"t": [0, 1]}, set())) == [("t", 0), ("t", 1)]


def test_interval_defaults_to_rocketmq_rebalance_period_and_must_be_positive():
    assert ConsumerSettings("g", CLIENT).broadcast_rediscover_interval_s == 20.0
    for bad in (0, -1.0):
        with pytest.raises(ConfigError):
            ConsumerSettings("g", CLIENT, broadcast_rediscover_interval_s=bad)


class _FakeConsumer:
    def __init__(self, partitions):
        self.partitions = partitions  # topic -> count, or an exception to raise
        self.assigned: list[TopicPartition] = []

    def list_topics(self, topic, timeout):
        assert timeout <= 5
        if isinstance(self.partitions, Exception):
            raise self.partitions
        meta = SimpleNamespace(error=None, partitions=dict.fromkeys(range(self.partitions[topic])))
        return SimpleNamespace(topics={topic: meta})

    def get_watermark_offsets(self, tp, timeout, cached):
        return (0, 7)

    def incremental_assign(self, tps):
        self.assigned += tps


def _membership(tmp_path):
    s = ConsumerSettings(
        "g",
        CLIENT,
        MessageModel.BROADCASTING,
        ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET,
        offset_store_dir=tmp_path,
    )
    subs = Subscriptions("g", "")
    subs.add("T", "*")
    written = []
    partitions = Partitions(s, lambda offsets, _a: written.append(dict(offsets)))
    return Membership(s, subs, partitions, False), partitions


def test_rediscover_assigns_only_new_partitions_from_their_beginning(tmp_path):
    # The fake's watermarks are (0, 7): a partition found after start is read from its
    # low watermark even though the consumer's own rule is "last offset".
    membership, partitions = _membership(tmp_path)
    consumer = _FakeConsumer({"T": 1})
    membership.rediscover(consumer)  # first look: partition 0 is new too
    consumer.partitions = {"T": 3}
    membership.rediscover(consumer)
    assert [(tp.topic, tp.partition, tp.offset) for tp in consumer.assigned] == [
        ("T", 0, 0),
        ("T", 1, 0),
        ("T", 2, 0),
    ]
    assert sorted(partitions.keys()) == [("T", 0), ("T", 1), ("T", 2)]
    membership.rediscover(consumer)
    assert len(consumer.assigned) == 3  # nothing new, nothing assigned again


def test_rediscover_only_logs_metadata_errors(tmp_path, caplog):
    membership, partitions = _membership(tmp_path)
    consumer = _FakeConsumer(KafkaException(KafkaError(KafkaError._TIMED_OUT)))
    membership.rediscover(consumer)
    assert consumer.assigned == [] and partitions.keys() == []
    assert "metadata of T unavailable" in caplog.text
