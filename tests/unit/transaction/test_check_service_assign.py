"""The check service's start on an assignment: its committed watermarks, looked up with
retries (a fake consumer: no broker)."""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import OFFSET_BEGINNING, KafkaError, KafkaException, TopicPartition

from rmqcompat import lookups
from rmqcompat.transaction.check_service import CheckService
from rmqcompat.transaction.pending import PendingHalves
from rmqcompat.transaction.state import CheckSettings


class TimingOutConsumer:
    """``committed`` times out ``failures`` times, then answers watermark 5 per half."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.lookups = 0
        self.assigned: list[TopicPartition] | None = None
        self.calls: list[str] = []

    def committed(self, tps: list[TopicPartition], timeout: float) -> list[TopicPartition]:
        self.lookups += 1
        if self.lookups <= self.failures:
            raise KafkaException(KafkaError(KafkaError._TIMED_OUT))
        return [TopicPartition(tp.topic, tp.partition, 5) for tp in tps]

    def assign(self, tps: list[TopicPartition]) -> None:
        self.assigned = tps

    def unsubscribe(self) -> None:
        self.calls.append("unsubscribe")

    def subscribe(self, topics: list[str], **callbacks: Any) -> None:
        self.calls.append("subscribe")


def _service() -> CheckService:
    ender: Any = None  # not reached: nothing is checked here
    return CheckService(
        {}, "", PendingHalves("PG", CheckSettings()), ender, lambda m: None, lambda: 0
    )


@pytest.fixture(autouse=True)
def _no_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lookups, "_RETRY_PAUSE_S", 0.0)


def test_a_watermark_lookup_that_times_out_is_asked_again_before_the_assignment() -> None:
    service, consumer = _service(), TimingOutConsumer(failures=2)
    half, op = service._half_topic, service._op_topic
    service._on_assign(consumer, [TopicPartition(half, 0), TopicPartition(op, 0)])  # type: ignore[arg-type]
    assert consumer.lookups == 3
    assert consumer.assigned is not None
    assert [(tp.topic, tp.offset) for tp in consumer.assigned] == [
        (half, -1001),  # the committed watermark: librdkafka's stored offset
        (op, OFFSET_BEGINNING),  # ops are read from their start on every assignment
    ]
    assert service._owned == {0}


def test_a_lookup_that_never_answers_leaves_the_halves_unread_and_joins_the_group_again() -> None:
    service, consumer = _service(), TimingOutConsumer(failures=lookups.LOOKUP_ATTEMPTS)
    service._on_assign(consumer, [TopicPartition(service._half_topic, 0)])  # type: ignore[arg-type]
    assert consumer.lookups == lookups.LOOKUP_ATTEMPTS
    assert consumer.assigned is None  # nothing read from an unknown watermark
    assert service._owned == set()
    service._rejoin_if_asked(consumer)  # type: ignore[arg-type]
    assert consumer.calls == ["unsubscribe", "subscribe"]
    service._rejoin_if_asked(consumer)  # type: ignore[arg-type]
    assert consumer.calls == ["unsubscribe", "subscribe"]  # once per failed start
