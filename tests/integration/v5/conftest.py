"""Fixtures of the RocketMQ 5 API tests: a configuration on the test's namespace with
topics ``Jobs`` and ``Other`` and a running forwarder, a sender, client clean-up."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest
from v5_helpers import SHORT_LEVELS, config, create_topic, message

from rmqcompat.v5 import ClientConfiguration, Producer


@pytest.fixture
def setup(kafka_bootstrap, namespace, client_overrides, start_forwarder) -> ClientConfiguration:
    create_topic(kafka_bootstrap, namespace, "Jobs")
    create_topic(kafka_bootstrap, namespace, "Other")
    start_forwarder(SHORT_LEVELS)
    return config(kafka_bootstrap, namespace, client_overrides)


@pytest.fixture
def started() -> Iterator[Callable[[Any], Any]]:
    """``started(client)``: ``client.startup()`` now, ``shutdown()`` (if running) at the end."""
    with ExitStack() as stack:

        def start(client: Any) -> Any:
            client.startup()
            stack.callback(lambda: client.shutdown() if client.is_running else None)
            return client

        yield start


@pytest.fixture
def send(setup, started) -> Callable[..., list[str]]:
    """``send(topic, *bodies, **fields)``: the message ids."""
    producer = started(Producer(setup))

    def send(topic: str, *bodies: bytes, **fields: Any) -> list[str]:
        return [producer.send(message(topic, b, **fields)).message_id for b in bodies]

    return send
