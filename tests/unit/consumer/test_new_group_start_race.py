"""A new group's start on a partition a record reaches while the start is being worked out.

The start is decided from one look at the partition's watermarks: the young-queue test
and the resolution of "last offset" must not each ask the broker, or a record produced
between the two looks is behind the start and never consumed (seen in CI: a drop-in
consumer that started, then sent, never received the message).
"""

from __future__ import annotations

from confluent_kafka import TopicPartition

from rmqcompat.config import ClientConfig
from rmqcompat.consumer.listener import ConsumeFromWhere
from rmqcompat.consumer.membership import Membership
from rmqcompat.consumer.partitions import Partitions
from rmqcompat.consumer.settings import ConsumerSettings
from rmqcompat.consumer.subscriptions import Subscriptions


class RecordArrivingConsumer:
    """Answers a watermark lookup of an empty partition; one record arrives right after
    the first lookup. Lookups by time find nothing (no record that recent)."""

    def __init__(self) -> None:
        self.high = 0
        self.lookups = 0

    def get_watermark_offsets(
        self, tp: TopicPartition, timeout: float, cached: bool
    ) -> tuple[int, int]:
        self.lookups += 1
        answer = (0, self.high)
        self.high = 1  # a producer's record lands just after this answer
        return answer

    def offsets_for_times(self, tps: list[TopicPartition], timeout: float) -> list[TopicPartition]:
        return [TopicPartition(tp.topic, tp.partition, -1) for tp in tps]


def test_a_record_arriving_while_the_start_is_decided_is_not_skipped():
    settings = ConsumerSettings(
        "g",
        ClientConfig("127.0.0.1:1"),
        consume_from_where=ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET,
    )
    partitions = Partitions(settings, lambda offsets, asynchronous: None)
    membership = Membership(settings, Subscriptions("g", ""), partitions, incremental=False)
    consumer = RecordArrivingConsumer()

    positions = membership.begin(consumer, [TopicPartition("T", 0)], {})  # type: ignore[arg-type]

    assert [(tp.topic, tp.partition, tp.offset) for tp in positions] == [("T", 0, 0)]
    assert consumer.lookups == 1
