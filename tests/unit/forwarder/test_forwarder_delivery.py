"""How the forwarder acts on a failed produce: retry what may succeed, quarantine the rest.

The producer here is a recorder that answers each produce with a chosen delivery report;
classification is rmqcompat.producer.failures' table (the same one the producer uses).
"""

from __future__ import annotations

from collections import deque
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka import Message as KafkaMessage

from rmqcompat import properties as props
from rmqcompat.forwarder.delivery import Deliveries, Lane
from rmqcompat.forwarder.metrics import ForwarderMetrics
from rmqcompat.process_queue import ProcessQueue
from rmqcompat.wire import OutgoingRecord

LEVEL = "ns.rmq.delay.1s"
QUARANTINE = "ns.rmq.quarantine"


class ScriptedProducer:
    """Answers produce() calls with the next scripted error (None = delivered)."""

    def __init__(self, errors: list[KafkaError | KafkaException | None]) -> None:
        self.errors = deque(errors)
        self.produced: list[str] = []
        self._reports: deque[tuple[Any, KafkaError | None]] = deque()

    def produce(self, topic: str, value: bytes, key: bytes | None, *args: Any) -> None:
        error = self.errors.popleft() if self.errors else None
        if isinstance(error, KafkaException):
            raise error
        self.produced.append(topic)
        self._reports.append((args[1], error))  # confluent's order: partition, callback, ...

    def poll(self, _timeout: float = 0) -> int:
        served = 0
        while self._reports:
            callback, error = self._reports.popleft()
            callback(error, None)
            served += 1
        return served

    def flush(self, _timeout: float = 0) -> int:
        self.poll()
        return 0


class Clock:
    def __init__(self) -> None:
        self.now = 1_000

    def __call__(self) -> int:
        return self.now


def run(errors: list[Any], rounds: int = 4) -> tuple[ScriptedProducer, Deliveries, Lane]:
    producer, clock = ScriptedProducer(errors), Clock()
    stub: Any = producer
    out = Deliveries(stub, ForwarderMetrics(), clock, retry_backoff_ms=500, namespace="ns")
    state = ProcessQueue()
    state.track_new(7)
    lane = Lane((LEVEL, 0), state, "1s")
    source = KafkaMessage(
        topic=LEVEL, partition=0, offset=7, key=b"k", value=b"v",
        headers=[(props.REAL_TOPIC, b"Orders"), (props.DUE_TIME, b"1")],
    )  # fmt: skip
    out.send(lane, source, OutgoingRecord("ns.Orders", b"v", b"k", []), "forwarded")
    for _ in range(rounds):
        out.serve(lambda owned: owned is lane)
        clock.now += 500
    return producer, out, lane


def count(out: Deliveries, name: str, **labels: str) -> float:
    out.tally.flush()  # per-record counts reach Prometheus each commit interval
    return out.tally.metrics.registry.get_sample_value(name, labels) or 0.0


def err(code: int) -> KafkaError:
    return KafkaError(code, "scripted")


@pytest.mark.parametrize(
    "code",
    [KafkaError._MSG_TIMED_OUT, KafkaError.NOT_ENOUGH_REPLICAS, KafkaError._TRANSPORT],
)
def test_retriable_failures_are_retried_and_hold_the_offset_until_delivered(code: int) -> None:
    producer, out, lane = run([err(code), err(code), None])
    assert producer.produced == ["ns.Orders"] * 3
    assert lane.state.commit_offset() == 8
    assert count(out, "rmqcompat_forwarder_quarantined_total", level="1s") == 0


@pytest.mark.parametrize(
    "failure",
    [
        err(KafkaError.UNKNOWN_TOPIC_OR_PART),
        err(KafkaError.TOPIC_AUTHORIZATION_FAILED),
        err(KafkaError.MSG_SIZE_TOO_LARGE),
        KafkaException(err(KafkaError._UNKNOWN_TOPIC)),  # refused inside produce()
    ],
    ids=["unknown-topic", "not-authorised", "too-large", "unknown-topic-at-produce"],
)
def test_refused_for_good_goes_to_quarantine_once_and_the_offset_moves_on(failure: Any) -> None:
    producer, out, lane = run([failure])
    assert producer.produced[-1:] == [QUARANTINE]
    assert producer.produced.count("ns.Orders") <= 1  # never retried
    assert lane.state.commit_offset() == 8
    assert count(out, "rmqcompat_forwarder_quarantined_total", level="1s") == 1
    code = (failure.args[0] if isinstance(failure, KafkaException) else failure).name()
    assert count(out, "rmqcompat_forwarder_undeliverable_total", level="1s", code=code) == 1


def test_a_refused_quarantine_record_is_retried_never_dropped() -> None:
    refused = err(KafkaError.TOPIC_AUTHORIZATION_FAILED)
    producer, _out, lane = run([refused, refused, refused, None])
    assert producer.produced == ["ns.Orders", QUARANTINE, QUARANTINE, QUARANTINE]
    assert lane.state.commit_offset() == 8


def test_a_fatal_client_error_is_reported_to_the_loop() -> None:
    fatal = KafkaError(KafkaError._FATAL, "fenced", fatal=True)
    _producer, out, lane = run([fatal], rounds=1)
    assert out.fatal is fatal
    assert 7 in lane.state  # still in flight: the position stays before it
    assert lane.state.commit_offset() == 7
