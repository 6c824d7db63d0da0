"""The forwarder's group, topics and client settings, derived from a :class:`ClientConfig`.

Subscription: the forwarder subscribes by pattern to *every* level topic of its namespace
(:func:`~rmqcompat.topics.delay_levels.level_topic_pattern`), not only to those of its
own delay table. Level topics are named by their delay (``<ns>.rmq.delay.10s``), so each
one tells the forwarder its delay, and a forwarder serves the parked records of clients with any
table: a client with
another ``message_delay_level`` no longer strands its messages. Its own table matters
only for the topics it creates at start and for the levels timer messages hop through.

librdkafka matches a pattern against metadata it refreshes every
``topic.metadata.refresh.interval.ms``: a level topic created later (a client with a
new table) is picked up at the next refresh, for which the forwarder sets 30 s instead
of librdkafka's 5 min, and joins the assignment in a rebalance.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rmqcompat.config import ClientConfig
from rmqcompat.errors import InvalidNameError
from rmqcompat.topics.delay_levels import format_duration_ms, topic_delay_ms
from rmqcompat.topics.naming import RESERVED, from_kafka_topic
from rmqcompat.topics.spec import TopologySpec
from rmqcompat.topics.topology import Topology, delay_topology

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


def level_topic(physical: str) -> LevelTopic:
    """The level topic ``physical``, a name the subscription pattern matches.

    Raises:
        InvalidNameError: ``physical`` is not a level topic name.
    """
    delay = topic_delay_ms(from_kafka_topic(physical)[1])
    if delay is None:
        raise InvalidNameError(f"{physical!r} is not a delay-level topic")
    return LevelTopic(physical, format_duration_ms(delay), delay)


def internal_topology(config: ClientConfig, spec: TopologySpec) -> Topology:
    """Every topic the forwarder reads or writes besides real topics: the level topics of
    its table and the system topics, sized for ``config.max_message_size`` like every
    creator's."""
    return delay_topology(
        levels=config.levels,
        spec=spec,
        namespace=config.namespace,
        max_message_size=config.max_message_size,
    )


#: Consumer defaults the user's ``kafka_config`` may override. Lateness is the forwarder's
#: product: librdkafka's ``fetch.wait.max.ms=500`` lets a record that arrives while a
#: fetch waits on the broker sit there for up to half a second (forwarder p99 417 ms at
#: 5k msg/s; 100 ms: see benchmarks/forwarder.py). A fetch per broker every 100 ms when
#: idle costs little; Apache Kafka accepts any value (it has no lower bound). The metadata
#: refresh bounds how long a new level topic waits for the pattern subscription to see it.
CONSUMER_DEFAULTS: dict[str, Any] = {
    "fetch.wait.max.ms": 100,
    "topic.metadata.refresh.interval.ms": 30_000,
}


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
    # Idempotence keeps the order of forwarded records across librdkafka's own retries;
    # acks=all: a forwarded record is on every in-sync replica before its offset commits.
    return config.librdkafka("producer", **{"acks": "all", "enable.idempotence": True})
