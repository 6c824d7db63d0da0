"""Where each newly assigned partition starts: its stored offset, else the group's policy.

A policy position (first, last, timestamp) is resolved to a concrete offset at once, so
the start can be committed right away. Were it left logical (``OFFSET_END``), nothing
would be committed until a record arrived, and the next owner would resolve "latest"
again, skipping whatever was produced in between (RocketMQ persists the start too).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence

from confluent_kafka import (
    OFFSET_BEGINNING,
    OFFSET_END,
    OFFSET_INVALID,
    KafkaException,
    TopicPartition,
)

from rmqcompat.consumer.listener import ConsumeFromWhere

_log = logging.getLogger("rmqcompat.consumer")

Key = tuple[str, int]
#: ``(low, high)`` watermarks of a partition, asked of the broker (not a cached value).
Watermarks = Callable[[TopicPartition], tuple[int, int]]


def fallback_offset(from_where: ConsumeFromWhere, is_retry_topic: bool) -> int | None:
    """Start of a partition with no stored offset; None means "look up the timestamp".

    A retry topic only holds this group's retries, so it always starts at the beginning.
    """
    if is_retry_topic or from_where is ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET:
        return OFFSET_BEGINNING
    if from_where is ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET:
        return OFFSET_END
    return None


def start_positions(
    partitions: Sequence[TopicPartition],
    stored: Mapping[Key, int],
    from_where: ConsumeFromWhere,
    retry_topics: set[str],
    by_time: Callable[[list[TopicPartition]], list[TopicPartition]],
) -> list[TopicPartition]:
    """``partitions`` with their start offsets (``by_time`` resolves timestamp lookups)."""
    out: list[TopicPartition] = []
    lookups: list[TopicPartition] = []
    for tp in partitions:
        offset = stored.get((tp.topic, tp.partition), -1)
        if offset < 0:
            offset = fallback_offset(from_where, tp.topic in retry_topics)
        if offset is None:
            lookups.append(tp)
        else:
            out.append(TopicPartition(tp.topic, tp.partition, offset))
    for tp in by_time(lookups) if lookups else []:
        out.append(
            TopicPartition(tp.topic, tp.partition, tp.offset if tp.offset >= 0 else OFFSET_END)
        )
    return out


def resolve(positions: Sequence[TopicPartition], watermarks: Watermarks) -> list[TopicPartition]:
    """``positions`` with ``OFFSET_BEGINNING`` / ``OFFSET_END`` replaced by real offsets.

    A broker whose "latest" answer is too small (Tansu) only makes us read some records
    again. A failed lookup yields ``OFFSET_INVALID``: librdkafka then starts from the
    committed offset, else from the earliest record (``auto.offset.reset``), which may
    re-read but never skips.
    """
    out = []
    for tp in positions:
        offset = tp.offset
        if offset in (OFFSET_BEGINNING, OFFSET_END):
            try:
                low, high = watermarks(tp)
                offset = low if offset == OFFSET_BEGINNING else high
            except KafkaException as exc:
                _log.warning("cannot resolve the start of %s[%d]: %s", tp.topic, tp.partition, exc)
                offset = OFFSET_INVALID
        out.append(TopicPartition(tp.topic, tp.partition, offset))
    return out
