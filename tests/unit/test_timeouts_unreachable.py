"""Issue 7 item 9: against a broker that is not there, sends and starts keep their bounds.

"Unreachable" is a closed loopback port. The bounds asserted are deliberately loose
(1.5x or 2x the configured time); what matters is the typed outcome and that the old
waits (metadata, then a full attempt; 30 s of topic creation) are gone.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from rmqcompat.config import DEFAULT_START_TIMEOUT_S
from rmqcompat.consumer import ConsumeConcurrentlyStatus, DefaultMQPushConsumer
from rmqcompat.devbroker import free_port
from rmqcompat.errors import BrokerUnreachableError, RetriableSendError
from rmqcompat.forwarder import DelayForwarder
from rmqcompat.message import Message
from rmqcompat.producer import DefaultMQProducer

SEND_TIMEOUT_MS = 1000
QUIET = {"log_level": 0}


@pytest.fixture
def nowhere() -> str:
    return f"127.0.0.1:{free_port()}"


@contextmanager
def within(bound_s: float) -> Iterator[None]:
    started = time.monotonic()
    yield
    assert time.monotonic() - started < bound_s


def started_producer(bootstrap: str) -> DefaultMQProducer:
    producer = DefaultMQProducer(
        "PG",
        bootstrap,
        send_msg_timeout=SEND_TIMEOUT_MS,
        kafka_config=QUIET,
        connect_on_start=False,
    )
    producer.start()
    return producer


@pytest.mark.parametrize(
    "message",
    [
        Message("Plain", b"x"),
        Message("Scheduled", b"x", delay_time_level=3),
        Message("Timer", b"x", deliver_time_ms=int(time.time() * 1000) + 60_000),
    ],
    ids=["plain", "scheduled", "timer"],
)
def test_a_sync_send_ends_within_send_msg_timeout(nowhere, message):
    producer = started_producer(nowhere)
    try:
        with within(1.5 * SEND_TIMEOUT_MS / 1000), pytest.raises(RetriableSendError):
            producer.send(message)
        # the topic is now known to be unanswerable: the next send gets a real attempt
        with within(1.5 * SEND_TIMEOUT_MS / 1000), pytest.raises(RetriableSendError):
            producer.send(message)
    finally:
        producer.shutdown()


def test_producer_start_fails_typed_within_send_msg_timeout(nowhere):
    producer = DefaultMQProducer(
        "PG", nowhere, send_msg_timeout=SEND_TIMEOUT_MS, kafka_config=QUIET
    )
    with within(2 * SEND_TIMEOUT_MS / 1000), pytest.raises(BrokerUnreachableError):
        producer.start()
    producer.shutdown()


def _consumer(bootstrap: str) -> DefaultMQPushConsumer:
    consumer = DefaultMQPushConsumer("G", bootstrap, kafka_config=QUIET)
    consumer.subscribe("T")
    consumer.register_message_listener(lambda msgs, ctx: ConsumeConcurrentlyStatus.CONSUME_SUCCESS)
    return consumer


@pytest.mark.parametrize(
    "start",
    [
        lambda bootstrap: _consumer(bootstrap).start(),
        lambda bootstrap: DelayForwarder(bootstrap, kafka_config=QUIET).start(),
    ],
    ids=["push_consumer", "forwarder"],
)
def test_consumer_and_forwarder_start_fail_typed_in_bounded_time(
    nowhere, start: Callable[[str], None]
):
    with within(2 * DEFAULT_START_TIMEOUT_S), pytest.raises(BrokerUnreachableError):
        start(nowhere)
