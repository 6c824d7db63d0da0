"""Each of upstream's samples (samples/producer.py, samples/consumer.py), used the way
they use the API, against a real broker: the calls, arguments and return values they
rely on, written in our own words."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from consumer_helpers import create_topic
from dropin_helpers import Connect, Received, started_consumer
from transaction_helpers import read_ids, wait_for

from rmqcompat.client import (
    ConsumeStatus,
    Message,
    Producer,
    PushConsumer,
    TransactionMQProducer,
    TransactionStatus,
)
from rmqcompat.transaction import CheckSettings


@pytest.fixture
def connect(kafka_bootstrap: str, namespace: str, client_overrides: dict[str, Any]) -> Connect:
    return Connect(kafka_bootstrap, namespace, client_overrides)


@pytest.fixture
def topic(kafka_bootstrap: str, namespace: str, unique_name: Callable[[str], str]) -> str:
    name = unique_name("TopicTest")
    create_topic(kafka_bootstrap, name, namespace, partitions=2)
    return name


def sample_message(topic: str) -> Message:
    msg = Message(topic)
    msg.set_keys("XXX")
    msg.set_tags("XXX")
    msg.set_property("property", "test")
    msg.set_body("message body")
    return msg


def test_send_message_sync_sample(connect: Connect, topic: str) -> None:
    producer = connect(Producer("test"))
    producer.start()
    results = [producer.send_sync(sample_message(topic)) for _ in range(10)]
    producer.shutdown()
    # the sample prints 'send message status: ' + str(ret.status) + ' msgId: ' + ret.msg_id
    assert {"send message status: " + str(r.status) for r in results} == {"send message status: 0"}
    assert len({r.msg_id for r in results}) == 10


def test_send_message_multi_threaded_sample(connect: Connect, topic: str) -> None:
    """Threads each start, send (checking ``ret.status == 0``) and shut down a producer
    of the same group under a lock, as the sample does."""
    mutex, sent = threading.Lock(), []

    def worker() -> None:
        producer = connect(Producer("test"))
        with mutex:
            producer.start()
            try:
                ret = producer.send_sync(sample_message(topic))
                if ret.status == 0:
                    sent.append(ret.msg_id)
            finally:
                producer.shutdown()

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(sent) == 3


def test_send_orderly_with_sharding_key_sample(connect: Connect, topic: str) -> None:
    producer = connect(Producer("test", True))
    producer.start()
    results = [
        producer.send_orderly_with_sharding_key(sample_message(topic), "orderId") for _ in range(5)
    ]
    producer.shutdown()
    assert [r.status for r in results] == [0] * 5
    offsets = [r.offset for r in results]
    assert offsets == sorted(offsets) and len(set(offsets)) == 5


def test_send_transaction_message_sample(
    connect: Connect, topic: str, kafka_bootstrap: str, namespace: str
) -> None:
    """local_execute answers UNKNOWN; the checker, asked later, COMMITs."""
    checked: list[str] = []

    def check_callback(msg: Any) -> Any:
        checked.append(msg.body.decode("utf-8"))
        return TransactionStatus.COMMIT

    def local_execute(msg: Any, user_args: Any) -> Any:
        assert msg.body.decode("utf-8") == "message body"
        return TransactionStatus.UNKNOWN

    producer = connect(TransactionMQProducer("test", check_callback))
    producer.set_check_settings(CheckSettings(check_immunity_time_s=1, check_interval_s=1))
    producer.start()
    try:
        ids = [
            producer.send_message_in_transaction(sample_message(topic), local_execute, None).msg_id
            for _ in range(2)
        ]
        assert wait_for(
            lambda: sorted(read_ids(kafka_bootstrap, topic, namespace, 0.5)) == sorted(ids)
        )
    finally:
        producer.shutdown()
    assert checked == ["message body"] * 2


def test_consumer_sample(connect: Connect, topic: str) -> None:
    """The consumer sample prints ``msg.id, msg.body, msg.get_property('property')`` and
    answers CONSUME_SUCCESS; a new group sees what was sent before it started."""
    producer = connect(Producer("test"))
    producer.start()
    msg_id = producer.send_sync(sample_message(topic)).msg_id
    producer.shutdown()
    printed: list[tuple[Any, ...]] = []

    def callback(msg: Any) -> Any:
        printed.append((msg.id, msg.body, msg.get_property("property")))
        return ConsumeStatus.CONSUME_SUCCESS

    received = Received(callback)
    consumer = started_consumer(connect, "consumer_group", topic, received)
    try:
        assert wait_for(lambda: printed == [(msg_id, b"message body", b"test")])
    finally:
        consumer.shutdown()
    assert isinstance(consumer, PushConsumer)
