"""Reading a topic from its start to its end *now*, correctly on every broker.

"The end now" is each partition's high watermark (``get_watermark_offsets``), taken once
before reading, so records that arrive meanwhile are left for the next run. A partition
is done when a record at ``high - 1`` or beyond was read, or librdkafka reports its end
(``enable.partition.eof``): the high watermark, or, read-committed, the last stable
offset, so transaction markers at the end and transactions still open (undecided, so
not yet part of the topic) never keep a scan waiting. No ``offsets_for_times``: Tansu
answers 0 for every timestamp.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition

from rmqcompat.errors import RmqCompatError
from rmqcompat.fetch import fetch

#: Seconds one metadata or watermark request may take.
REQUEST_TIMEOUT_S = 10.0
#: Seconds without a record or an end-of-partition event before a scan gives up.
STALL_S = 30.0
_BATCH = 500
_POLL_S = 1.0


class ScanStalledError(RmqCompatError):
    """Reading a topic to its end made no progress for :data:`STALL_S` seconds."""

    retriable = True


def reader(settings: Mapping[str, Any]) -> Consumer:
    """A consumer for scans: no group membership, no commits, read-committed."""
    return Consumer(
        {
            # an end-of-partition event waits for one fetch; the default 500 ms made every
            # bound cost half a second
            "fetch.wait.max.ms": 50,
            **settings,
            "group.id": "rmqcompat-cli-reader",
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "enable.partition.eof": True,
            "isolation.level": "read_committed",
        }
    )


def partitions_of(consumer: Consumer, physical: str) -> list[int] | None:
    """The partitions of ``physical``, or None if the topic does not exist."""
    metadata = consumer.list_topics(physical, timeout=REQUEST_TIMEOUT_S).topics.get(physical)
    if metadata is None or metadata.error is not None:
        return None
    return sorted(metadata.partitions)


def bounds(consumer: Consumer, physical: str, partition: int) -> tuple[int, int]:
    """``(low, end)`` of a partition now: its first offset, and the offset after its last
    (committed) record.

    The end is taken from a fetch, not from ``ListOffsets`` alone: Tansu answers
    ``ListOffsets(latest)`` with the base offset of the last record batch + 1 (a batch of 4
    records at offset 0 gives 1, not 4), while its fetch responses carry the true high
    watermark. So the consumer is assigned at the listed end (never past the true one) and
    reads to the end-of-partition event, whose offset is the end; on Apache Kafka that
    event comes at once. A partition listed as empty is not fetched (the fetch would wait
    ``fetch.wait.max.ms`` for nothing). Leaves the consumer unassigned.
    """
    low, listed = consumer.get_watermark_offsets(
        TopicPartition(physical, partition), timeout=REQUEST_TIMEOUT_S, cached=False
    )
    if listed <= low:  # empty: Tansu too lists at least 1 once a batch is stored
        return int(low), int(low)
    consumer.assign([TopicPartition(physical, partition, max(int(low), int(listed)))])
    try:
        deadline = time.monotonic() + REQUEST_TIMEOUT_S
        while time.monotonic() < deadline:
            event = consumer.poll(min(_POLL_S, REQUEST_TIMEOUT_S))
            if event is None:
                continue
            error = event.error()
            if error is not None and error.code() == KafkaError._PARTITION_EOF:  # noqa: SLF001
                return int(low), max(int(listed), event.offset() or 0)
            if error is not None:
                raise KafkaException(error)
        return int(low), int(listed)  # no end event in time: the broker's own answer
    finally:
        consumer.unassign()


def scan(
    consumer: Consumer,
    physical: str,
    starts: Mapping[int, int] | None = None,
    until: Mapping[int, int] | None = None,
) -> Iterator[Message]:
    """Every record of ``physical`` from each partition's start (or ``starts[p]``) to its
    high watermark now, partition by partition in fetch order.

    Read-committed, "now" ends at the first record of a transaction still open. With
    ``until[p]`` (a high watermark taken by a read-uncommitted request), the scan reads up
    to that offset at least, waiting while transactions before it are undecided.

    Raises:
        KafkaException: a fetch failed (the topic vanished, authorisation...).
        ScanStalledError: no progress for :data:`STALL_S` seconds.
    """
    ends: dict[int, int] = {}
    assignment = []
    for partition in partitions_of(consumer, physical) or []:
        low, high = bounds(consumer, physical, partition)
        high = max(high, (until or {}).get(partition, high))
        start = max(low, (starts or {}).get(partition, low))
        if start < high:
            ends[partition] = high
            assignment.append(TopicPartition(physical, partition, start))
    if not ends:
        return
    consumer.assign(assignment)
    try:
        yield from _until_ends(consumer, ends, until or {})
    finally:
        consumer.unassign()


def _until_ends(
    consumer: Consumer, ends: dict[int, int], until: Mapping[int, int]
) -> Iterator[Message]:
    open_partitions = dict(ends)
    last_progress = time.monotonic()
    while open_partitions:
        batch = fetch(consumer, _BATCH, _POLL_S)
        if batch:
            last_progress = time.monotonic()
        elif time.monotonic() - last_progress > STALL_S:
            raise ScanStalledError(
                f"nothing read for {STALL_S:g} s before the end of partitions "
                f"{sorted(open_partitions)} (broker gone, or a transaction left open)"
            )
        for record in batch:
            partition = record.partition() or 0
            end = open_partitions.get(partition)
            if end is None:
                continue
            error = record.error()
            if error is not None:
                if error.code() != KafkaError._PARTITION_EOF:  # noqa: SLF001
                    raise KafkaException(error)
                # the end of what is committed: the high watermark, or the first record of
                # a transaction still open (read-committed stops there; it is not decided),
                # where a scan with ``until`` waits for the transaction's end
                if (record.offset() or 0) >= until.get(partition, 0):
                    del open_partitions[partition]
                continue
            if (record.offset() or 0) < end:
                yield record
            if (record.offset() or 0) >= end - 1:
                del open_partitions[partition]
