"""Create (idempotently) the Kafka topics behind logical names, with the admin client."""

from __future__ import annotations

import time
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from confluent_kafka import KafkaError, KafkaException, TopicCollection
from confluent_kafka.admin import AdminClient, NewTopic

from rmqcompat.errors import TopologyError
from rmqcompat.topics.naming import collision_key, to_kafka_topic
from rmqcompat.topics.spec import BROKER_DEFAULT, TopicSpec

ADMIN_TIMEOUT_S = 30.0
#: How long the request naming the topics may take before the whole list is read instead.
#: librdkafka sends it to the broker the metadata names as the controller, and a new
#: client can be told that is a broker which died moments ago: on a three-node cluster
#: with one node SIGKILLed (2026-11-29), 3 of 26 new clients' requests timed out within
#: 25 s of the kill while every one of them read the list from a live broker at once.
#: Healthy, the request takes about 1 ms.
BY_NAME_TIMEOUT_S = 2.0
_VISIBLE_POLL_S = 0.05
#: The least a request is given when the admin timeout is (nearly) spent.
_LEAST_WAIT_S = 0.05


def ensure_topics(
    admin_settings: Mapping[str, Any],
    topics: Mapping[str, TopicSpec],
    namespace: str = "",
) -> list[str]:
    """Create the missing Kafka topics for ``topics`` (logical name -> spec).

    Returns once every topic it created (or found being created) is in the broker's
    metadata with a leader for each partition: Apache Kafka answers CreateTopics when the
    controller has committed the topic, before the brokers serve it, and a consumer that
    subscribes in that window is told the topic does not exist and looks again only at its
    next metadata refresh (5 minutes by default).

    A :data:`~rmqcompat.topics.spec.REPLICATED` spec gets its replicas from the brokers
    the cluster lists now (:meth:`TopicSpec.on_cluster`).

    Returns the physical names that were created (existing ones are left alone).

    Where every topic exists (each start of a client after the first) one request naming
    them answers; only otherwise is the broker's whole topic list read, for the collision
    check and the broker count: on a broker holding 3,000 topics that list took 45-62 ms
    a request, the named request about 1 ms.

    Raises:
        InvalidNameError: a logical name cannot be mapped (before any I/O).
        TopologyError: the broker refused to create a topic, or a created topic did not
            become usable within 30 s.
    """
    wanted = {to_kafka_topic(logical, namespace): spec for logical, spec in topics.items()}
    admin = AdminClient(dict(admin_settings))
    deadline = time.monotonic() + ADMIN_TIMEOUT_S
    if _all_exist(admin, wanted):
        return []
    # what is left of the one admin timeout: an unreachable broker is waited out once
    metadata = admin.list_topics(timeout=max(deadline - time.monotonic(), _LEAST_WAIT_S))
    existing = set(metadata.topics)
    check_collisions(wanted, existing)
    brokers = len(metadata.brokers)
    missing = [
        _new_topic(name, spec.on_cluster(brokers))
        for name, spec in wanted.items()
        if name not in existing
    ]
    if not missing:
        return []
    created, appearing = [], []
    for name, future in admin.create_topics(missing, request_timeout=ADMIN_TIMEOUT_S).items():
        try:
            future.result()
            created.append(name)
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise TopologyError(f"could not create topic {name}: {exc.args[0]}") from exc
        appearing.append(name)
    _wait_until_served(admin, appearing)
    return created


def _all_exist(admin: AdminClient, names: Collection[str]) -> bool:
    """Whether the broker has every topic of ``names``, asked in one request that names
    them only (DescribeTopics: it never creates a topic). False for any other answer (a
    missing topic, a broker without the request, no answer within
    :data:`BY_NAME_TIMEOUT_S`): the caller then reads the whole list and decides from it.
    """
    if not names:
        return True
    timeout_s = min(BY_NAME_TIMEOUT_S, ADMIN_TIMEOUT_S)
    try:
        asked = admin.describe_topics(TopicCollection(list(names)), request_timeout=timeout_s)
        for future in asked.values():
            future.result()
    except KafkaException:
        return False
    return True


def _wait_until_served(admin: AdminClient, names: Collection[str]) -> None:
    deadline = time.monotonic() + ADMIN_TIMEOUT_S
    waiting = set(names)
    while waiting:
        topics = admin.list_topics(timeout=ADMIN_TIMEOUT_S).topics
        waiting = {name for name in waiting if not _served(topics.get(name))}
        if not waiting:
            return
        if time.monotonic() > deadline:
            raise TopologyError(
                f"topics {sorted(waiting)} were created but have no leader after "
                f"{ADMIN_TIMEOUT_S:.0f} s"
            )
        time.sleep(_VISIBLE_POLL_S)


def _served(metadata: Any) -> bool:
    return (
        metadata is not None
        and metadata.error is None
        and bool(metadata.partitions)
        and all(p.leader >= 0 and p.error is None for p in metadata.partitions.values())
    )


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
    """``spec`` as resolved by :meth:`TopicSpec.on_cluster` (its replication is decided)."""
    replicas = spec.replication_factor
    return NewTopic(
        name,
        num_partitions=spec.partitions,
        replication_factor=BROKER_DEFAULT if replicas is None else replicas,
        config=dict(spec.configs),
    )


def physical_names(logical: Iterable[str], namespace: str = "") -> dict[str, str]:
    """Logical -> physical for every name of ``logical`` (raises before any I/O)."""
    return {name: to_kafka_topic(name, namespace) for name in logical}
