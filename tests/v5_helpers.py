"""Helpers of the RocketMQ 5 API tests (no tests here): a configuration on the test's
namespace, topic creation, a receive loop and raw reads of a topic."""

from __future__ import annotations

import time
from typing import Any

from confluent_kafka import Message as KafkaMessage
from forwarder_helpers import read

from rmqcompat import properties as props
from rmqcompat.topics.naming import dlq_topic, to_kafka_topic
from rmqcompat.topics.provision import ensure_topics
from rmqcompat.topics.spec import TopicSpec
from rmqcompat.v5 import ClientConfiguration, Credentials, Message, SimpleConsumer

SHORT_LEVELS = "100ms 200ms 300ms 400ms 500ms 600ms 700ms 800ms 900ms 1s"
#: Safety net only: a test that waits longer than this has failed (no timing is asserted).
GIVE_UP_S = 60.0


def config(bootstrap: str, namespace: str, overrides: dict[str, Any]) -> ClientConfiguration:
    return ClientConfiguration(
        bootstrap,
        Credentials(),
        namespace,
        kafka_config=overrides,
        message_delay_level=SHORT_LEVELS,
    )


def create_topic(bootstrap: str, namespace: str, topic: str, partitions: int = 1) -> None:
    ensure_topics({"bootstrap.servers": bootstrap}, {topic: TopicSpec(partitions)}, namespace)


def message(topic: str, body: bytes, **fields: Any) -> Message:
    msg = Message()
    msg.topic = topic
    msg.body = body
    for name, value in fields.items():
        setattr(msg, name, value)
    return msg


def receive_until(
    consumer: SimpleConsumer, count: int, invisible_s: int = 30, max_num: int = 16
) -> list[Message]:
    """Receive until ``count`` messages came (or fail after GIVE_UP_S)."""
    got: list[Message] = []
    deadline = time.monotonic() + GIVE_UP_S
    while len(got) < count:
        assert time.monotonic() < deadline, f"received {len(got)} of {count}"
        got += consumer.receive(max_num, invisible_s)
    return got


def read_topic(
    bootstrap: str, namespace: str, topic: str, overrides: dict[str, Any], count: int | None
) -> list[KafkaMessage]:
    return read(bootstrap, to_kafka_topic(topic, namespace), overrides, count)


def read_dlq(
    bootstrap: str, namespace: str, group: str, overrides: dict[str, Any], count: int
) -> list[dict[str, str]]:
    """The properties of the first ``count`` records of ``%DLQ%<group>``."""
    records = read_topic(bootstrap, namespace, dlq_topic(group), overrides, count)
    return [props.from_headers(r.headers() or []) for r in records]
