"""Where each newly assigned partition starts: its stored offset, else the group's policy.

A policy position (first, last, timestamp) is resolved to a concrete offset at once, so
the start can be committed right away. Were it left logical (``OFFSET_END``), nothing
would be committed until a record arrived, and the next owner would resolve "latest"
again, skipping whatever was produced in between (RocketMQ persists the start too).

RocketMQ in two steps, both emulated here:

1. The broker (``ConsumerManageProcessor.queryConsumerOffset``) answers a group with no
   offset with 0 when the queue is young: its min offset is 0 and its first message is
   still in memory (page cache). So whatever the policy, a new group on a young queue
   reads from the beginning: an app that sends, then starts a new group, sees its
   messages. See :class:`YoungQueue` for the measure of "young" on Kafka.
2. Otherwise the client (``RebalancePushImpl.computePullFromWhereWithException``)
   applies the policy: FIRST -> the beginning; LAST -> the end (a retry topic: its
   beginning); TIMESTAMP -> the first offset at ``consume_timestamp`` (default 30 min
   before start), a retry topic its end.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

from confluent_kafka import (
    OFFSET_BEGINNING,
    OFFSET_END,
    OFFSET_INVALID,
    KafkaException,
    TopicPartition,
)

from rmqcompat.consumer.listener import ConsumeFromWhere
from rmqcompat.wire import Key

_log = logging.getLogger("rmqcompat.consumer")

#: ``(low, high)`` watermarks of a partition, asked of the broker (not a cached value).
Watermarks = Callable[[TopicPartition], tuple[int, int]]
#: The first offset of a partition whose record timestamp is >= the given epoch ms (-1:
#: none), as Kafka's ListOffsets by timestamp answers it.
OffsetAtTime = Callable[[TopicPartition, int], int]
#: RocketMQ's default ``consumeTimestamp``: 30 minutes before the consumer started.
DEFAULT_TIMESTAMP_LOOKBACK_MS = 30 * 60 * 1000


def default_timestamp_ms(configured: int | None, started_ms: int) -> int:
    """``consume_timestamp_ms``, or RocketMQ's default: 30 minutes before start."""
    return started_ms - DEFAULT_TIMESTAMP_LOOKBACK_MS if configured is None else configured


@dataclass(frozen=True)
class YoungQueue:
    """RocketMQ's "young queue" test on a Kafka partition.

    RocketMQ asks whether the queue's min offset is 0 and the page of its first message
    is resident in memory (``checkInMemByConsumeOffset(topic, queue, 0, 1)``). Residency
    is lost to two things: time (the page cache evicts the least recently used pages)
    and volume (everything written since competes for the cache). Kafka exposes neither
    cache, so both are bounded explicitly. A partition is young when

    - its log start offset is still 0 (nothing was removed by retention or truncation),
    - it holds at most ``max_messages`` records (volume; also bounds what a new group
      re-reads), and
    - its first record's timestamp is at most ``max_age_ms`` old (time), asked with a
      ListOffsets-by-timestamp lookup: offset 0 answers ``now - max_age_ms`` only when
      record 0 is that recent.

    ``max_messages == 0`` switches the rule off (only an empty partition is "young", and
    its start is 0 either way). A lookup that fails counts as "not young" (the policy
    applies). Tansu answers every timestamp lookup with 0, so there only the first two
    conditions act.
    """

    max_messages: int
    max_age_ms: int
    watermarks: Watermarks
    offset_at_time: OffsetAtTime
    now_ms: Callable[[], int]

    def __call__(self, tp: TopicPartition) -> bool:
        try:
            low, high = self.watermarks(tp)
            if low != 0 or high > self.max_messages or high == 0:
                return False
            return self.offset_at_time(tp, self.now_ms() - self.max_age_ms) == 0
        except KafkaException as exc:
            _log.warning("cannot tell whether %s[%d] is young: %s", tp.topic, tp.partition, exc)
            return False


def fallback_offset(from_where: ConsumeFromWhere, is_retry_topic: bool) -> int | None:
    """RocketMQ's client-side start of a queue the broker has no offset for (and that is
    not young); None means "look up the timestamp".

    A retry topic only holds this group's retries, so it starts at its beginning, except
    under TIMESTAMP, where RocketMQ starts it at its end.
    """
    if from_where is ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET:
        return OFFSET_BEGINNING
    if from_where is ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET:
        return OFFSET_BEGINNING if is_retry_topic else OFFSET_END
    return OFFSET_END if is_retry_topic else None


def new_group_start(
    from_where: ConsumeFromWhere, is_retry_topic: bool, young: Callable[[], bool]
) -> int | None:
    """Start of a partition with no stored offset: 0 on a young queue (the broker's
    answer), else :func:`fallback_offset`. ``young`` is asked only when it matters."""
    fallback = fallback_offset(from_where, is_retry_topic)
    if fallback != OFFSET_BEGINNING and young():
        return 0
    return fallback


def start_positions(
    partitions: Sequence[TopicPartition],
    stored: Mapping[Key, int],
    from_where: ConsumeFromWhere,
    retry_topics: set[str],
    by_time: Callable[[list[TopicPartition]], list[TopicPartition]],
    young: Callable[[TopicPartition], bool] = lambda _tp: False,
) -> list[TopicPartition]:
    """``partitions`` with their start offsets (``by_time`` resolves timestamp lookups;
    ``young`` tells a young queue, see :class:`YoungQueue`)."""
    out: list[TopicPartition] = []
    lookups: list[TopicPartition] = []
    for tp in partitions:
        kept = stored.get((tp.topic, tp.partition), -1)
        offset = (
            kept
            if kept >= 0
            else new_group_start(from_where, tp.topic in retry_topics, partial(young, tp))
        )
        if offset is None:
            lookups.append(tp)
        else:
            out.append(TopicPartition(tp.topic, tp.partition, offset))
    for tp in by_time(lookups) if lookups else []:
        out.append(
            TopicPartition(tp.topic, tp.partition, tp.offset if tp.offset >= 0 else OFFSET_END)
        )
    return out


def looked_up_once(watermarks: Watermarks) -> Watermarks:
    """``watermarks`` asking the broker at most once per partition.

    A start is decided from one look at a partition: the young-queue test and the
    resolution of "last offset" must see the same watermarks. Were each to ask, a record
    produced between the two looks (an empty partition, then one record) would lie
    behind the start and never be consumed.
    """
    seen: dict[Key, tuple[int, int]] = {}

    def look(tp: TopicPartition) -> tuple[int, int]:
        key = (tp.topic, tp.partition)
        if key not in seen:
            seen[key] = watermarks(tp)
        return seen[key]

    return look


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
