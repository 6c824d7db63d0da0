"""Every producer rmqcompat configures waits for all in-sync replicas (``acks=all``) and is
idempotent, and a passthrough setting cannot weaken the internal ones: on a replicated
cluster a record it reports written survives the loss of a broker, and a retry never
writes it twice."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from rmqcompat.config import ClientConfig
from rmqcompat.consumer.settings import ConsumerSettings
from rmqcompat.consumer.wiring import producer_config
from rmqcompat.forwarder.settings import producer_settings
from rmqcompat.producer.settings import ProducerSettings
from rmqcompat.transaction.settings import half_producer

WEAK = {"acks": "1", "enable.idempotence": False}

BUILDERS: dict[str, Callable[[ClientConfig], dict[str, Any]]] = {
    "application producer": lambda client: ProducerSettings("P", client).librdkafka(),
    "send-back": lambda client: producer_config(ConsumerSettings("G", client)),
    "forwarder": producer_settings,
    "transaction halves": lambda client: half_producer(client, 3000),
}


@pytest.mark.parametrize("builder", BUILDERS.values(), ids=BUILDERS.keys())
def test_acks_all_and_idempotence(builder: Callable[[ClientConfig], dict[str, Any]]) -> None:
    settings = builder(ClientConfig("127.0.0.1:1"))
    assert (settings["acks"], settings["enable.idempotence"]) == ("all", True)


@pytest.mark.parametrize(
    "builder",
    [b for name, b in BUILDERS.items() if name != "application producer"],
    ids=[name for name in BUILDERS if name != "application producer"],
)
def test_internal_producers_keep_them_whatever_is_passed_through(
    builder: Callable[[ClientConfig], dict[str, Any]],
) -> None:
    settings = builder(ClientConfig("127.0.0.1:1", kafka_config=WEAK))
    assert (settings["acks"], settings["enable.idempotence"]) == ("all", True)
