"""Fixtures shared by the broker tests of this folder."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from rmqcompat.forwarder import DelayForwarder


@pytest.fixture
def start_forwarder(
    kafka_bootstrap: str, namespace: str, client_overrides: dict[str, str | int]
) -> Iterator[Callable[..., DelayForwarder]]:
    """Factory: ``(table, **settings) -> DelayForwarder``, started in the test's namespace;
    every forwarder it started is shut down when the test ends."""
    started: list[DelayForwarder] = []

    def start(table: str, **kwargs: Any) -> DelayForwarder:
        forwarder = DelayForwarder(
            kafka_bootstrap,
            namespace=namespace,
            message_delay_level=table,
            kafka_config=client_overrides,
            **kwargs,
        )
        forwarder.start()
        started.append(forwarder)
        return forwarder

    yield start
    for forwarder in started:
        forwarder.shutdown()
