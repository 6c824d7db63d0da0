"""A send-back remembers its routes: each send still goes where ``route_failed`` says,
for counts and delay levels that repeat and for more of them than it keeps."""

from __future__ import annotations

import itertools

from confluent_kafka import KafkaError

from rmqcompat.consumer import sendback
from rmqcompat.consumer.sendback import Done, SendBack
from rmqcompat.message import MessageExt
from rmqcompat.retry import DestinationKind, RetryPolicy, route_failed
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.naming import to_kafka_topic
from rmqcompat.wire import OutgoingRecord


class _Topics:
    """A record sink that keeps the topic of each record and reports it stored."""

    def __init__(self) -> None:
        self.topics: list[str] = []

    def produce(self, record: OutgoingRecord, done: Done) -> None:
        self.topics.append(record.topic)
        done(None)


def _expected_topic(policy: RetryPolicy, stored: int, level: int) -> str | None:
    dest = route_failed(policy, stored, level)
    if dest.kind is DestinationKind.DLQ:
        return to_kafka_topic(dest.real_topic, "ns")
    if dest.kind is DestinationKind.DISCARD:
        return None
    return to_kafka_topic(policy.levels.topic(dest.level), "ns")


def test_every_send_goes_where_route_failed_says_also_past_the_routes_kept() -> None:
    policy = RetryPolicy("G", DelayLevels.parse(), max_reconsume_times=5)
    sink = _Topics()
    send_back = SendBack(sink, policy, "ns", now_ms=lambda: 0)  # type: ignore[arg-type]
    levels = range(-2, sendback.ROUTES_KEPT // 4)  # with the counts: past ROUTES_KEPT
    inputs = list(itertools.product(range(8), levels)) * 2  # each route asked again
    assert len(set(inputs)) > sendback.ROUTES_KEPT
    errors: list[KafkaError | None] = []
    for stored, level in inputs:
        msg = MessageExt("Orders", b"b", "ID", 0, 0, 0, 0, stored, {})
        send_back.send(msg, stored, level, errors.append)
    expected = [_expected_topic(policy, s, lv) for s, lv in inputs]
    assert sink.topics == [topic for topic in expected if topic is not None]
    assert errors == [None] * len(inputs)
