"""The forwarder's group, topics and client settings, derived from a :class:`ClientConfig`.

Subscription: the forwarder subscribes to the level topics of its configured delay table
by name, not to a regex such as ``^<ns>\\.rmq\\.delay\\.``. Reasons: it needs each level's
delay anyway (clock-skew correction, timer hops onto the table's levels), and RocketMQ
too has one delay table per deployment; librdkafka matches regex subscriptions only
against metadata refreshed every ``topic.metadata.refresh.interval.ms`` (5 min by
default), so a level topic created later would wait unserved for minutes and each new
match triggers a rebalance; and since ``start()`` creates the table's topics first, the
named subscription never meets an unknown topic. Consequence (documented): every client
of a namespace must use the same ``message_delay_level`` as its forwarders.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rmqcompat.config import ClientConfig
from rmqcompat.topics.delay_levels import format_duration_ms
from rmqcompat.topics.naming import QUARANTINE_TOPIC, RESERVED, to_kafka_topic
from rmqcompat.topics.spec import TopicSpec, TopologySpec

#: librdkafka's consume batch; bounds how many records of a partition sit in memory.
CONSUME_BATCH = 500


def forwarder_group(namespace: str) -> str:
    """The consumer group shared by every forwarder of ``namespace``: ``<ns>.rmq.forwarder``.

    ``rmq`` is reserved (no namespace or business group can be called that), and the name
    uses only characters every Kafka tool accepts.
    """
    return f"{namespace}.{RESERVED}.forwarder" if namespace else f"{RESERVED}.forwarder"


@dataclass(frozen=True)
class LevelTopic:
    """A level topic as the forwarder sees it: Kafka name, metric label and delay."""

    physical: str
    label: str
    delay_ms: int


def level_topics(config: ClientConfig) -> list[LevelTopic]:
    levels = config.levels
    return [
        LevelTopic(
            to_kafka_topic(levels.topic(level), config.namespace),
            format_duration_ms(levels.delay_ms(level)),
            levels.delay_ms(level),
        )
        for level in range(1, levels.max_level + 1)
    ]


def internal_topics(config: ClientConfig, topology: TopologySpec) -> dict[str, TopicSpec]:
    """Logical name -> spec of every topic the forwarder reads or writes besides real topics.

    Sized for ``config.max_message_size`` (``max.message.bytes``), like every creator's.
    """
    topology = topology.sized_for(config.max_message_size)
    wanted = {topic: topology.delay for topic in config.levels.topics()}
    wanted[QUARANTINE_TOPIC] = topology.quarantine
    return wanted


#: Consumer defaults the user's ``kafka_config`` may override. Lateness is the forwarder's
#: product: librdkafka's ``fetch.wait.max.ms=500`` lets a record that arrives while a
#: fetch waits on the broker sit there for up to half a second (forwarder p99 417 ms at
#: 5k msg/s; 100 ms: see benchmarks/forwarder.py). A fetch per broker every 100 ms when
#: idle costs little; Apache Kafka accepts any value (it has no lower bound).
CONSUMER_DEFAULTS: dict[str, Any] = {"fetch.wait.max.ms": 100}


def consumer_settings(config: ClientConfig) -> dict[str, Any]:
    # Offsets are committed by hand, only up to what was delivered; a new group must start
    # at the oldest parked record, never skip to the end.
    explicit = {
        "group.id": forwarder_group(config.namespace),
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "auto.offset.reset": "earliest",
    }
    return {**CONSUMER_DEFAULTS, **config.librdkafka("consumer", **explicit)}


def producer_settings(config: ClientConfig) -> dict[str, Any]:
    # Idempotence keeps the order of forwarded records across librdkafka's own retries.
    return config.librdkafka("producer", **{"enable.idempotence": True})
