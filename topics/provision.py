"""Create (idempotently) the Kafka topics behind logical names, with the admin client."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

from rmqcompat.errors import TopologyError
from rmqcompat.topics.naming import collision_key, to_kafka_topic
from rmqcompat.topics.spec import TopicSpec

ADMIN_TIMEOUT_S = 30.0


def ensure_topics(
    admin_settings: Mapping[str, Any],
    topics: Mapping[str, TopicSpec],
    namespace: str = "",
) -> list[str]:
    """Create the missing Kafka topics for ``topics`` (logical name -> spec).

    Returns the physical names that were created (existing ones are left alone).

    Raises:
        InvalidNameError: a logical name cannot be mapped (before any I/O).
        TopologyError: the broker refused to create a topic.
    """
    wanted = {to_kafka_topic(logical, namespace): spec for logical, spec in topics.items()}
    admin = AdminClient(dict(admin_settings))
    existing = set(admin.list_topics(timeout=ADMIN_TIMEOUT_S).topics)
    check_collisions(wanted, existing)
    missing = [_new_topic(name, spec) for name, spec in wanted.items() if name not in existing]
    if not missing:
        return []
    created = []
    for name, future in admin.create_topics(missing, request_timeout=ADMIN_TIMEOUT_S).items():
        try:
            future.result()
            created.append(name)
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise TopologyError(f"could not create topic {name}: {exc.args[0]}") from exc
    return created


def check_collisions(wanted: Iterable[str], existing: Iterable[str]) -> None:
    """Refuse names that Apache Kafka would reject as colliding (``.`` read as ``_``).

    Checked here rather than left to the broker so that every broker, including lenient
    test brokers, behaves like Apache Kafka.

    Raises:
        TopologyError: two names (wanted, or wanted and existing) share a collision key.
    """
    seen: dict[str, str] = {}
    for name in [*existing, *wanted]:
        other = seen.setdefault(collision_key(name), name)
        if other != name:
            raise TopologyError(
                f"topic {name!r} collides with {other!r}: Apache Kafka treats '.' and '_' "
                "alike in topic names"
            )


def _new_topic(name: str, spec: TopicSpec) -> NewTopic:
    return NewTopic(
        name,
        num_partitions=spec.partitions,
        replication_factor=spec.replication_factor,
        config=dict(spec.configs),
    )


def physical_names(logical: Iterable[str], namespace: str = "") -> dict[str, str]:
    """Logical -> physical for every name of ``logical`` (raises before any I/O)."""
    return {name: to_kafka_topic(name, namespace) for name in logical}
