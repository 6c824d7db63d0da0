"""Where a new group starts: RocketMQ's young-queue rule, then its policy (SEMANTICS 5b)."""

from __future__ import annotations

import pytest
from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, KafkaError, KafkaException, TopicPartition

from rmqcompat.consumer.listener import ConsumeFromWhere
from rmqcompat.consumer.positions import (
    YoungQueue,
    default_timestamp_ms,
    fallback_offset,
    start_positions,
)

FIRST = ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET
LAST = ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET
TIMESTAMP = ConsumeFromWhere.CONSUME_FROM_TIMESTAMP
NOW_MS = 1_700_000_000_000
TP = TopicPartition("biz", 0)


def _young(low: int, high: int, first_ms: int, max_messages: int = 100) -> bool:
    """The rule on a partition with watermarks ``(low, high)`` whose record 0 is stamped
    ``first_ms`` (what Kafka's lookup by timestamp answers for it)."""

    def offset_at_time(_tp: TopicPartition, stamp_ms: int) -> int:
        return 0 if first_ms >= stamp_ms else 1

    rule = YoungQueue(max_messages, 60_000, lambda _tp: (low, high), offset_at_time, lambda: NOW_MS)
    return rule(TP)


@pytest.mark.parametrize(
    ("low", "high", "first_ms", "young"),
    [
        (0, 5, NOW_MS - 1_000, True),  # sent a second ago, nothing removed: young
        (0, 100, NOW_MS - 60_000, True),  # at both limits
        (0, 101, NOW_MS - 1_000, False),  # large
        (0, 5, NOW_MS - 60_001, False),  # old
        (1, 5, NOW_MS - 1_000, False),  # truncated (retention, DeleteRecords)
        (0, 0, NOW_MS, False),  # empty: its end is 0 anyway
    ],
)
def test_a_queue_is_young_when_untruncated_small_and_recent(low, high, first_ms, young):
    assert _young(low, high, first_ms) is young


def test_max_messages_zero_switches_the_rule_off():
    assert _young(0, 1, NOW_MS, max_messages=0) is False


def test_a_failed_lookup_counts_as_not_young():
    def down(_tp: TopicPartition) -> tuple[int, int]:
        raise KafkaException(KafkaError(KafkaError._TIMED_OUT))

    assert YoungQueue(100, 60_000, down, lambda _tp, _ms: 0, lambda: NOW_MS)(TP) is False


@pytest.mark.parametrize(
    ("from_where", "retry", "start"),
    [
        (FIRST, False, OFFSET_BEGINNING),
        (FIRST, True, OFFSET_BEGINNING),
        (LAST, False, OFFSET_END),
        (LAST, True, OFFSET_BEGINNING),
        (TIMESTAMP, False, None),  # looked up by time
        (TIMESTAMP, True, OFFSET_END),  # RocketMQ: the retry topic's max offset
    ],
)
def test_policy_start_of_a_queue_that_is_not_young(from_where, retry, start):
    assert fallback_offset(from_where, retry) == start


@pytest.mark.parametrize("from_where", [LAST, TIMESTAMP])
def test_a_young_queue_starts_at_zero_under_every_policy(from_where):
    tps = [TopicPartition("biz", 0), TopicPartition("biz", 1), TopicPartition("retry", 0)]
    out = start_positions(
        tps,
        {("biz", 1): 42},
        from_where,
        {"retry"},
        lambda lookups: pytest.fail(f"no timestamp lookup expected: {lookups}"),
        young=lambda _tp: True,
    )
    assert [(tp.topic, tp.partition, tp.offset) for tp in out] == [
        ("biz", 0, 0),
        ("biz", 1, 42),  # a stored offset always wins
        # LAST starts a retry topic at its beginning anyway (the low watermark, 0 here)
        ("retry", 0, 0 if from_where is TIMESTAMP else OFFSET_BEGINNING),
    ]


def test_timestamp_defaults_to_30_minutes_before_start():
    assert default_timestamp_ms(None, NOW_MS) == NOW_MS - 30 * 60 * 1000
    assert default_timestamp_ms(123, NOW_MS) == 123
