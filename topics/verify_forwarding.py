"""Which level topics of a namespace no forwarder consumes: their parked messages wait.

A level topic is served when some member of the forwarder group has it in its current
assignment. Forwarders subscribe to every level topic of their namespace by pattern, so
an unserved topic means no forwarder runs, a forwarder of an older version (subscribed by
name to its own table) runs instead, or the topic is newer than the forwarders' last
metadata refresh (30 s). ``rmqcompat topics verify`` prints them and the forwarder
exports them as metrics.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from confluent_kafka import ConsumerGroupState, KafkaError, KafkaException
from confluent_kafka.admin import AdminClient

from rmqcompat.errors import TopologyError
from rmqcompat.topics.delay_levels import level_topic_pattern
from rmqcompat.topics.provision import ADMIN_TIMEOUT_S


def unserved_level_topics(
    admin: AdminClient | Mapping[str, Any], namespace: str, group: str
) -> tuple[str, ...]:
    """The level topics (Kafka names) of ``namespace`` that no member of ``group`` is assigned.

    Args:
        admin: an admin client, or librdkafka settings to make one.
        namespace: whose level topics to check.
        group: the forwarder group (:func:`rmqcompat.forwarder.forwarder_group`).

    Raises:
        TopologyError: the topics or the group could not be described.
    """
    client = admin if isinstance(admin, AdminClient) else AdminClient(dict(admin))
    pattern = re.compile(level_topic_pattern(namespace))
    try:
        names = client.list_topics(timeout=ADMIN_TIMEOUT_S).topics
        levels = sorted(name for name in names if pattern.match(name))
        assigned = _assigned_topics(client, group) if levels else set()
    except KafkaException as exc:
        raise TopologyError(f"could not check forwarder group {group}: {exc.args[0]}") from exc
    return tuple(name for name in levels if name not in assigned)


def _assigned_topics(client: AdminClient, group: str) -> set[str]:
    future = client.describe_consumer_groups([group], request_timeout=ADMIN_TIMEOUT_S)[group]
    try:
        description = future.result()
    except KafkaException as exc:
        if exc.args[0].code() == KafkaError.GROUP_ID_NOT_FOUND:
            return set()
        raise
    if description.state == ConsumerGroupState.STABLE and not description.members:
        # Apache Kafka never answers this; Tansu 0.6.0 always does. Unknowable, not "none".
        raise TopologyError(f"the broker describes group {group} as stable with no members")
    return {
        tp.topic
        for member in description.members
        if member.assignment is not None
        for tp in member.assignment.topic_partitions
    }
