"""Where each newly assigned partition starts: its stored offset, else the group's policy."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, TopicPartition

from rmqcompat.consumer.listener import ConsumeFromWhere

Key = tuple[str, int]


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
