"""Purging a group's dead letters: move its DLQ start forward with DeleteRecords.

Only the group's own ``%DLQ%<group>`` topic is touched. ``--before TIME`` finds, per
partition, the first record dead-lettered at or after TIME by reading from the start (a
method right on every broker: Tansu answers ``offsets_for_times`` with 0);
``--up-to-offset`` deletes every record below the given offset.
"""

from __future__ import annotations

from collections.abc import Mapping

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient

from rmqcompat.config import ClientConfig
from rmqcompat.dlq.errors import UnknownGroupError
from rmqcompat.dlq.reader import dlq_physical
from rmqcompat.dlq.scan import REQUEST_TIMEOUT_S, bounds, partitions_of, reader, scan
from rmqcompat.errors import ConfigError


def purge_points(
    config: ClientConfig,
    group: str,
    *,
    before_ms: int | None = None,
    up_to: Mapping[int | None, int] | None = None,
) -> dict[int, tuple[int, int]]:
    """Partition -> ``(current start, new start)`` for the partitions that would move.

    ``up_to`` maps a partition (None: every partition) to the offset that becomes its
    start; exactly one of ``before_ms`` and ``up_to`` is given.

    Raises:
        UnknownGroupError: the group has no DLQ topic.
        ConfigError: an offset is beyond a partition's end, or a partition does not exist.
    """
    physical = dlq_physical(config, group)
    consumer = reader(config.librdkafka("consumer"))
    try:
        partitions = partitions_of(consumer, physical)
        if partitions is None:
            raise UnknownGroupError(f"group {group!r} has no dead-letter topic {physical}")
        ranges = {p: bounds(consumer, physical, p) for p in partitions}
        if before_ms is not None:
            targets = _first_at_or_after(consumer, physical, ranges, before_ms)
        else:
            targets = _explicit(physical, ranges, up_to or {})
    finally:
        consumer.close()
    return {p: (ranges[p][0], new) for p, new in sorted(targets.items()) if new > ranges[p][0]}


def _first_at_or_after(
    consumer: Consumer, physical: str, ranges: dict[int, tuple[int, int]], before_ms: int
) -> dict[int, int]:
    targets = {p: high for p, (_, high) in ranges.items()}
    found: set[int] = set()
    for record in scan(consumer, physical):
        partition = record.partition() or 0
        if partition not in found and record.timestamp()[1] >= before_ms:
            targets[partition] = record.offset() or 0
            found.add(partition)
    return targets


def _explicit(
    physical: str, ranges: dict[int, tuple[int, int]], up_to: Mapping[int | None, int]
) -> dict[int, int]:
    targets = {}
    for partition, (_, high) in ranges.items():
        offset = up_to.get(partition, up_to.get(None))
        if offset is None:
            continue
        if offset > high:
            raise ConfigError(
                f"offset {offset} is beyond the end ({high}) of {physical}[{partition}]"
            )
        targets[partition] = offset
    unknown = {p for p in up_to if p is not None and p not in ranges}
    if unknown:
        raise ConfigError(f"{physical} has no partition {sorted(unknown)}")
    return targets


def purge(config: ClientConfig, group: str, points: Mapping[int, tuple[int, int]]) -> int:
    """Delete the records below each new start; how many records were deleted.

    Raises:
        KafkaException: the broker refused (e.g. it does not implement DeleteRecords).
    """
    if not points:
        return 0
    physical = dlq_physical(config, group)
    admin = AdminClient(config.librdkafka("admin"))
    wanted = [TopicPartition(physical, p, new) for p, (_, new) in points.items()]
    for future in admin.delete_records(wanted, request_timeout=REQUEST_TIMEOUT_S).values():
        future.result()
    return sum(new - old for old, new in points.values())
