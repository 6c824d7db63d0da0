"""What ``topics describe``, ``consume --peek`` and ``msg show`` read from the broker.

Bounds come from each partition's watermarks read now (right on every broker), records
from :func:`rmqcompat.dlq.scan.scan`; nothing here commits or joins a group.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import cast

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

from rmqcompat.config import ClientConfig
from rmqcompat.dlq.scan import REQUEST_TIMEOUT_S, bounds, partitions_of, reader, scan
from rmqcompat.errors import MalformedHeaderError, RmqCompatError
from rmqcompat.forwarder.settings import forwarder_group
from rmqcompat.message import MessageExt
from rmqcompat.topics.topology import PlannedTopic, Topology
from rmqcompat.wire import KafkaRecord, TopicDecoder, offset_message_id


class NotFoundError(RmqCompatError):
    """The topic or message asked for does not exist."""


@dataclass(frozen=True)
class TopicState:
    """One topic of a topology as the broker has it now; ``waiting`` counts parked records
    not yet forwarded (delay kind) or dead letters (dlq kind), else None."""

    logical: str
    physical: str
    kind: str
    exists: bool
    partitions: int
    start_offsets: tuple[int, ...]
    end_offsets: tuple[int, ...]
    retention_ms: str | None
    waiting: int | None


def describe_topics(config: ClientConfig, topology: Topology) -> list[TopicState]:
    admin = AdminClient(config.librdkafka("admin"))
    consumer = reader(config.librdkafka("consumer"))
    try:
        return [_state(admin, consumer, config, planned) for planned in topology.topics]
    finally:
        consumer.close()


def _state(
    admin: AdminClient, consumer: Consumer, config: ClientConfig, planned: PlannedTopic
) -> TopicState:
    partitions = partitions_of(consumer, planned.physical)
    if partitions is None:
        return TopicState(
            planned.logical, planned.physical, planned.kind, False, 0, (), (), None, None
        )
    ranges = [bounds(consumer, planned.physical, p) for p in partitions]
    waiting = None
    if planned.kind == "dlq":
        waiting = sum(high - low for low, high in ranges)
    elif planned.kind == "delay":
        waiting = _unforwarded(config, planned.physical, partitions, ranges)
    return TopicState(
        planned.logical,
        planned.physical,
        planned.kind,
        True,
        len(partitions),
        tuple(low for low, _ in ranges),
        tuple(high for _, high in ranges),
        _retention(admin, planned.physical),
        waiting,
    )


def _unforwarded(
    config: ClientConfig, physical: str, partitions: list[int], ranges: list[tuple[int, int]]
) -> int:
    """Records after the forwarder group's committed offsets (all of them if none)."""
    group = Consumer(
        config.librdkafka("consumer", **{"group.id": forwarder_group(config.namespace)})
    )
    try:
        wanted = [TopicPartition(physical, p) for p in partitions]
        committed = group.committed(wanted, timeout=REQUEST_TIMEOUT_S)
    finally:
        group.close()
    total = 0
    for position, (low, high) in zip(committed, ranges, strict=True):
        start = position.offset if position.offset >= 0 else low
        total += max(0, high - max(start, low))
    return total


def _retention(admin: AdminClient, physical: str) -> str | None:
    resource = ConfigResource(ResourceType.TOPIC, physical)
    described = admin.describe_configs([resource], request_timeout=REQUEST_TIMEOUT_S)
    entry = described[resource].result().get("retention.ms")
    return None if entry is None else str(entry.value)


def _messages(
    consumer: Consumer, physical: str, starts: dict[int, int] | None
) -> Iterator[MessageExt]:
    decoder = TopicDecoder.of(physical)
    for record in scan(consumer, physical, starts):
        try:
            # confluent's stub types headers() wider than it returns for a consumed record
            kafka_record = cast(KafkaRecord, record)
            yield decoder.decode(kafka_record, record.partition() or 0, record.offset() or 0)
        except MalformedHeaderError:
            continue  # a poison record is the quarantine's business, not a reader's


def find_message(config: ClientConfig, physical: str, msg_id: str) -> list[MessageExt]:
    """Every record of ``physical`` whose message id (or storage id) is ``msg_id``.

    Raises:
        NotFoundError: the topic does not exist.
    """
    consumer = reader(config.librdkafka("consumer"))
    try:
        if partitions_of(consumer, physical) is None:
            raise NotFoundError(f"topic {physical} does not exist")
        return [
            msg
            for msg in _messages(consumer, physical, None)
            if msg_id in (msg.msg_id, offset_message_id(physical, msg.queue_id, msg.queue_offset))
        ]
    finally:
        consumer.close()


def peek(config: ClientConfig, physical: str, limit: int, from_beginning: bool) -> list[MessageExt]:
    """Up to ``limit`` messages of ``physical`` without a group: the first ones, or the
    last ones of every partition (``limit`` from each end, then the newest ``limit``).

    Raises:
        NotFoundError: the topic does not exist.
    """
    consumer = reader(config.librdkafka("consumer"))
    try:
        partitions = partitions_of(consumer, physical)
        if partitions is None:
            raise NotFoundError(f"topic {physical} does not exist")
        starts = None
        if not from_beginning:
            starts = {p: bounds(consumer, physical, p)[1] - limit for p in partitions}
        found: list[MessageExt] = []
        for msg in _messages(consumer, physical, starts):
            found.append(msg)
            if from_beginning and len(found) >= limit:
                break
        if not from_beginning:
            found = sorted(found, key=lambda m: m.store_timestamp)[-limit:]
        return found
    finally:
        consumer.close()
