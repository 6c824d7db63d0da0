"""Bodies up to ``max_message_size`` (RocketMQ: 4 MiB) pass every hop, not just the first.

Apache Kafka refuses records above a topic's ``max.message.bytes`` (about 1 MiB unless
set), so every topic rmqcompat creates carries one sized for ``max_message_size``, and
each client's ``message.max.bytes`` matches it. The configs are checked with
describe_configs on every broker; Tansu does not enforce them, so the end-to-end test
proves the topic part only on brokers that do (noida-db, Apache Kafka) and the client
part (librdkafka's own ``message.max.bytes`` check) everywhere.
"""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType
from forwarder_helpers import create_topics, read
from waiting import wait_until

from rmqcompat.forwarder import DelayForwarder
from rmqcompat.message import DEFAULT_MAX_MESSAGE_SIZE, Message, max_record_bytes
from rmqcompat.producer import DefaultMQProducer, SendStatus
from rmqcompat.topics.naming import to_kafka_topic
from rmqcompat.topics.spec import MAX_MESSAGE_BYTES, TopicSpec

TABLE = "100ms 200ms"
BIG = 2 * 1024 * 1024  # above Kafka's ~1 MiB default, below the 4 MiB promise


def max_message_bytes(bootstrap: str, physical: list[str]) -> dict[str, str | None]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    resources = [ConfigResource(ResourceType.TOPIC, name) for name in physical]
    futures = admin.describe_configs(resources, request_timeout=30)
    out = {}
    for name, resource in zip(physical, resources, strict=True):
        entry = futures[resource].result().get(MAX_MESSAGE_BYTES)
        out[name] = None if entry is None else entry.value
    return out


def test_level_topics_created_by_the_producer_fit_its_max_message_size(
    kafka_bootstrap, namespace, client_overrides
):
    size = 6 * 1024 * 1024
    create_topics(kafka_bootstrap, namespace, {"T": TopicSpec(1)})
    with DefaultMQProducer(
        "PG",
        kafka_bootstrap,
        namespace=namespace,
        message_delay_level=TABLE,
        kafka_config=client_overrides,
        max_message_size=size,
    ) as producer:
        producer.send(Message("T", b"x", delay_time_level=2))
    level = to_kafka_topic("%SCHEDULE%200ms", namespace)
    assert max_message_bytes(kafka_bootstrap, [level]) == {level: str(max_record_bytes(size))}


def test_topics_created_by_the_forwarder_fit_its_max_message_size(
    kafka_bootstrap, namespace, client_overrides
):
    size = 6 * 1024 * 1024
    forwarder = DelayForwarder(
        kafka_bootstrap,
        namespace=namespace,
        message_delay_level=TABLE,
        kafka_config=client_overrides,
        max_message_size=size,
    )
    forwarder.start()
    forwarder.shutdown()
    names = ["%SCHEDULE%100ms", "%SCHEDULE%200ms", "RMQ_SYS_QUARANTINE_TOPIC"]
    physical = [to_kafka_topic(name, namespace) for name in names]
    expected = dict.fromkeys(physical, str(max_record_bytes(size)))
    assert max_message_bytes(kafka_bootstrap, physical) == expected


def test_a_large_scheduled_message_reaches_its_topic_through_the_forwarder(
    kafka_bootstrap, namespace, client_overrides
):
    # The business topic is the user's; here it is created the way the topology CLI does.
    spec = TopicSpec(1).sized_for(DEFAULT_MAX_MESSAGE_SIZE)
    create_topics(kafka_bootstrap, namespace, {"Big": spec})
    forwarder = DelayForwarder(
        kafka_bootstrap,
        namespace=namespace,
        message_delay_level=TABLE,
        kafka_config=client_overrides,
    )
    forwarder.start()
    try:
        wait_until(forwarder.healthy, what="assignment")
        with DefaultMQProducer(
            "PG",
            kafka_bootstrap,
            namespace=namespace,
            message_delay_level=TABLE,
            kafka_config=client_overrides,
        ) as producer:
            result = producer.send(Message("Big", b"b" * BIG, delay_time_level=1))
        assert result.send_status is SendStatus.SEND_OK
        (msg,) = read(kafka_bootstrap, to_kafka_topic("Big", namespace), client_overrides, 1)
    finally:
        forwarder.shutdown()
    assert msg.value() == b"b" * BIG


def test_the_broker_enforces_topic_size_limits(kafka_bootstrap, namespace, broker_kind):
    """Control: on this broker an unsized topic refuses the body, so the test above means
    something for the topic configs, not only for the clients' message.max.bytes."""
    if broker_kind == "tansu":
        pytest.skip("Tansu 0.6.0 does not enforce max.message.bytes (topic or broker)")
    create_topics(kafka_bootstrap, namespace, {"Unsized": TopicSpec(1)})
    failures: list[Any] = []
    producer = Producer({"bootstrap.servers": kafka_bootstrap, "message.max.bytes": 8 << 20})
    physical = to_kafka_topic("Unsized", namespace)
    producer.produce(physical, b"u" * BIG, on_delivery=lambda err, _msg: failures.append(err))
    producer.flush(30)
    assert [err.code() for err in failures] == [KafkaError.MSG_SIZE_TOO_LARGE]
