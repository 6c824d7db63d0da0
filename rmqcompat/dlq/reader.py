"""Reading dead letters: one group's (``dlq show``, ``export``, ``replay``), or a summary of
every group of a namespace (``dlq list``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from confluent_kafka import Consumer, TopicPartition

from rmqcompat.config import ClientConfig
from rmqcompat.dlq.errors import UnknownGroupError
from rmqcompat.dlq.filters import MATCH_ALL, DeadLetterFilter
from rmqcompat.dlq.model import DeadLetter
from rmqcompat.dlq.scan import REQUEST_TIMEOUT_S, bounds, partitions_of, reader, scan
from rmqcompat.errors import InvalidNameError
from rmqcompat.topics.naming import (
    DLQ_PREFIX,
    dlq_topic,
    from_kafka_topic,
    is_dlq_topic,
    to_kafka_topic,
)


def dlq_physical(config: ClientConfig, group: str) -> str:
    """The physical DLQ topic of ``group`` (raises InvalidNameError for an illegal group)."""
    return to_kafka_topic(dlq_topic(group), config.namespace)


def read_dead_letters(
    config: ClientConfig,
    group: str,
    where: DeadLetterFilter = MATCH_ALL,
    limit: int | None = None,
) -> Iterator[DeadLetter]:
    """The dead letters of ``group`` that match ``where``, oldest offset first per
    partition, at most ``limit``.

    Raises:
        InvalidNameError: ``group`` is not a legal consumer group.
        UnknownGroupError: the group has no DLQ topic in the namespace.
    """
    physical = dlq_physical(config, group)
    consumer = reader(config.librdkafka("consumer"))
    try:
        if partitions_of(consumer, physical) is None:
            raise UnknownGroupError(
                f"group {group!r} has no dead letters: topic {physical} does not exist"
                + (f" (namespace {config.namespace!r})" if config.namespace else "")
            )
        found = 0
        for record in scan(consumer, physical):
            letter = DeadLetter.of_record(group, record)
            if where.matches(letter):
                yield letter
                found += 1
                if limit is not None and found >= limit:
                    return
    finally:
        consumer.close()


@dataclass(frozen=True)
class GroupDeadLetters:
    """One group's DLQ: how many records it holds and the oldest and newest dead-letter
    times (epoch ms; None when it is empty)."""

    group: str
    topic: str
    count: int
    oldest_ms: int | None
    newest_ms: int | None


def list_dead_letter_groups(config: ClientConfig) -> list[GroupDeadLetters]:
    """Every group of the namespace whose DLQ topic holds records, by group name."""
    consumer = reader(config.librdkafka("consumer"))
    try:
        topics = consumer.list_topics(timeout=REQUEST_TIMEOUT_S).topics
        found = []
        for physical in sorted(topics):
            group = _dlq_group(physical, config.namespace)
            if group is not None:
                summary = _summarise(consumer, group, physical)
                if summary.count:
                    found.append(summary)
        return sorted(found, key=lambda item: item.group)
    finally:
        consumer.close()


def _dlq_group(physical: str, namespace: str) -> str | None:
    try:
        found_namespace, logical = from_kafka_topic(physical)
    except InvalidNameError:
        return None
    if found_namespace != namespace or not is_dlq_topic(logical):
        return None
    return logical.removeprefix(DLQ_PREFIX)


def _summarise(consumer: Consumer, group: str, physical: str) -> GroupDeadLetters:
    count, times = 0, []
    for partition in partitions_of(consumer, physical) or []:
        low, high = bounds(consumer, physical, partition)
        if high > low:
            count += high - low
            for offset in (low, high - 1):
                stamp = _timestamp_at(consumer, physical, partition, offset)
                times += [] if stamp is None else [stamp]
    return GroupDeadLetters(
        group, physical, count, min(times, default=None), max(times, default=None)
    )


def _timestamp_at(consumer: Consumer, physical: str, partition: int, offset: int) -> int | None:
    consumer.assign([TopicPartition(physical, partition, offset)])
    try:
        record = consumer.poll(REQUEST_TIMEOUT_S)
    finally:
        consumer.unassign()
    if record is None or record.error() is not None:
        return None
    return record.timestamp()[1]
