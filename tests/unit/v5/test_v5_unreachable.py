"""5.x clients against a broker that is not there (a closed loopback port): upstream's
exception type, and a client that can be started again later."""

from __future__ import annotations

import pytest

from rmqcompat.devbroker import free_port
from rmqcompat.v5 import ClientConfiguration, FilterExpression, Producer, SimpleConsumer
from rmqcompat.v5.exceptions import ProxyTimeoutException


@pytest.fixture
def nowhere() -> ClientConfiguration:
    return ClientConfiguration(f"127.0.0.1:{free_port()}", request_timeout=1)


def test_producer_startup_raises_proxy_timeout(nowhere):
    producer = Producer(nowhere)
    with pytest.raises(ProxyTimeoutException) as caught:
        producer.startup()
    assert caught.value.code == 50400
    assert not producer.is_running


@pytest.mark.slow  # a consumer's startup waits the core's 10 s for a broker
def test_consumer_startup_raises_proxy_timeout(nowhere):
    consumer = SimpleConsumer(nowhere, "G", {"T": FilterExpression()})
    with pytest.raises(ProxyTimeoutException):
        consumer.startup()
    assert not consumer.is_running and consumer.subscriptions() == {"T": "*"}
