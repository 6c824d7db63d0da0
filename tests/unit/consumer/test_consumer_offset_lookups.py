"""Offset lookups behind a new group's start survive the moment after topic creation when
Apache Kafka still answers NOT_LEADER_FOR_PARTITION, and give up after a bounded number
of attempts (the caller then lets librdkafka pick a start that never skips)."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from rmqcompat import lookups
from rmqcompat.consumer import membership

NOT_LEADER = KafkaException(KafkaError(KafkaError.NOT_LEADER_FOR_PARTITION))


class FlakyClient:
    """Stands in for the consumer client: fails ``failures`` times, then answers."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0

    def get_watermark_offsets(
        self, tp: TopicPartition, timeout: float, cached: bool
    ) -> tuple[int, int]:
        self.calls += 1
        if self.calls <= self.failures:
            raise NOT_LEADER
        return 0, 7


@pytest.fixture(autouse=True)
def _no_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lookups, "_RETRY_PAUSE_S", 0.0)


def test_watermarks_are_retried_while_the_leader_is_not_ready() -> None:
    client = FlakyClient(failures=lookups.LOOKUP_ATTEMPTS - 1)

    assert membership._watermarks(client, TopicPartition("T", 0)) == (0, 7)  # type: ignore[arg-type]
    assert client.calls == lookups.LOOKUP_ATTEMPTS


def test_watermarks_give_up_after_the_last_attempt() -> None:
    client = FlakyClient(failures=lookups.LOOKUP_ATTEMPTS)

    with pytest.raises(KafkaException):
        membership._watermarks(client, TopicPartition("T", 0))  # type: ignore[arg-type]
    assert client.calls == lookups.LOOKUP_ATTEMPTS
