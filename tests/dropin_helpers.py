"""Helpers of the drop-in tests: clients configured for the test's broker and namespace,
and a callback that records what it is given."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from rmqcompat.client import ConsumeStatus, Producer, PushConsumer, ReceivedMessage


class Connect:
    """Gives a drop-in client the test's broker (as its name-server address), namespace
    and fast-test librdkafka settings."""

    def __init__(self, bootstrap: str, namespace: str, overrides: dict[str, Any]) -> None:
        self.bootstrap, self.namespace, self.overrides = bootstrap, namespace, overrides

    def __call__(self, client: Any) -> Any:
        client.set_name_server_address(self.bootstrap)
        client.set_namespace(self.namespace)
        client.set_kafka_config(self.overrides)
        return client

    def producer(self, group: str = "dropin-producer", *args: Any) -> Producer:
        producer = self(Producer(group, *args))
        producer.start()
        return producer


class Received:
    """A callback recording (message, attributes) and answering with ``answer(msg)``."""

    def __init__(self, answer: Callable[[ReceivedMessage], Any] | None = None) -> None:
        self.messages: list[ReceivedMessage] = []
        self.lock = threading.Lock()
        self._answer = answer or (lambda msg: ConsumeStatus.CONSUME_SUCCESS)

    def __call__(self, msg: ReceivedMessage) -> Any:
        with self.lock:
            self.messages.append(msg)
        return self._answer(msg)

    def ids(self) -> list[str]:
        with self.lock:
            return [m.id for m in self.messages]


def started_consumer(
    connect: Connect, group: str, topic: str, callback: Any, **kw: Any
) -> PushConsumer:
    consumer = connect(PushConsumer(group, **kw))
    consumer.subscribe(topic, callback)
    consumer.start()
    return consumer
