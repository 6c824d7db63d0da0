"""librdkafka settings, offset writers and the internal topics of a push consumer."""

from __future__ import annotations

import logging
from typing import Any

from confluent_kafka import Consumer, KafkaError, TopicPartition

from rmqcompat.consumer.offset_store import LocalFileOffsetStore
from rmqcompat.consumer.partitions import OffsetWriter
from rmqcompat.consumer.settings import ConsumerSettings
from rmqcompat.core_plugin import with_plugin
from rmqcompat.topics import naming
from rmqcompat.topics.spec import TopologySpec
from rmqcompat.topics.topology import Topology, consumer_topology
from rmqcompat.wire import Key

_log = logging.getLogger("rmqcompat.consumer")

#: librdkafka settings a push consumer starts from; the user's ``kafka_config`` wins.
#: librdkafka stops fetching a partition once its queue holds ``queued.min.messages``
#: (100,000) or ``queued.max.messages.kbytes`` (under ``consume()`` that queue is the
#: consumer's, shared by all its partitions), and then postpones that partition's next
#: fetch by ``fetch.queue.backoff.ms``, 1 s by default. Flow control pauses a partition
#: (which drops that queue) and resumes it once the listener caught up, but the postponed
#: fetch stays: with a backlog, a resumed partition sat idle for up to a second (measured
#: in a retry round trip of 100,000 messages: 0.35-0.65 s on average per resume, half of
#: the run). 10 ms only makes librdkafka look at the queue's length sooner.
CONSUMER_DEFAULTS: dict[str, Any] = {"fetch.queue.backoff.ms": 10}


def kafka_group_id(settings: ConsumerSettings) -> str:
    """The consumer's Kafka group id (:func:`rmqcompat.topics.naming.kafka_group_id`)."""
    return naming.kafka_group_id(settings.group, settings.client.namespace)


def consumer_config(settings: ConsumerSettings) -> dict[str, Any]:
    """Start positions are explicit (membership), so ``auto.offset.reset`` only acts when a
    position is out of range (retention, truncation): like RocketMQ on OFFSET_TOO_SMALL,
    continue from the earliest record still stored; "latest" would skip all of them.
    Flow control pauses and resumes partitions: see :data:`CONSUMER_DEFAULTS`."""
    group_id = kafka_group_id(settings)
    if settings.broadcasting:
        group_id += ".broadcast"  # never joins: broadcasting consumers assign() themselves
    explicit = {
        "group.id": group_id,
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "auto.offset.reset": "earliest",
        "on_commit": _on_commit,
    }
    config = {**CONSUMER_DEFAULTS, **settings.client.librdkafka("consumer", **explicit)}
    return with_plugin(config)


def producer_config(settings: ConsumerSettings) -> dict[str, Any]:
    """The send-back producer; it must take every body the app's producer accepts (a
    ``message.max.bytes`` the user passed is kept: the operator decided)."""
    explicit: dict[str, Any] = {
        "acks": "all",
        "enable.idempotence": True,
        "linger.ms": 5,
        "message.timeout.ms": int(settings.send_back_timeout_s * 1000),
    }
    return settings.client.librdkafka("producer", **explicit)


def _on_commit(err: KafkaError | None, tps: list[TopicPartition]) -> None:
    if err is not None:
        _log.warning("offset commit failed (retried at the next commit): %s", err)


def commit_writer(consumer: Consumer) -> OffsetWriter:
    def write(offsets: dict[Key, int], asynchronous: bool) -> None:
        tps = [TopicPartition(topic, part, off) for (topic, part), off in offsets.items()]
        if asynchronous:
            consumer.commit(offsets=tps, asynchronous=True)
        else:
            consumer.commit(offsets=tps, asynchronous=False)

    return write


def file_writer(store: LocalFileOffsetStore) -> OffsetWriter:
    def write(offsets: dict[Key, int], _asynchronous: bool) -> None:
        store.persist(offsets)

    return write


def internal_topology(settings: ConsumerSettings, spec: TopologySpec, orderly: bool) -> Topology:
    """Topics the consumer may write to or read (business topics are the user's), sized
    for ``max_message_size`` so a send-back is never refused for its size."""
    return consumer_topology(
        settings.group,
        levels=settings.client.levels,
        broadcasting=settings.broadcasting,
        dead_letter=settings.dead_letter,
        orderly=orderly,
        spec=spec,
        namespace=settings.client.namespace,
        max_message_size=settings.client.max_message_size,
    )
