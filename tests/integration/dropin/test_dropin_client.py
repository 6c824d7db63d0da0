"""The drop-in ``Producer`` and ``PushConsumer`` against a real broker: every send method,
what a callback sees, failures as upstream's exception classes, settings applied at
start(), broadcasting, and a new group seeing what was sent before it subscribed."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from consumer_helpers import create_topic, trace_events
from dropin_helpers import Connect, Received, started_consumer
from transaction_helpers import wait_for

from rmqcompat.client import (
    ConsumeStatus,
    Message,
    MessageModel,
    Producer,
    PushConsumer,
    SendStatus,
)
from rmqcompat.consts import MessageProperty
from rmqcompat.errors import BrokerUnreachableError, FatalSendError, MessageTooLargeError
from rmqcompat.exceptions import (
    ProducerSendOnewayFailed,
    ProducerSendOrderlyFailed,
    ProducerSendSyncFailed,
    ProducerStartFailed,
)


@pytest.fixture
def connect(kafka_bootstrap: str, namespace: str, client_overrides: dict[str, Any]) -> Connect:
    return Connect(kafka_bootstrap, namespace, client_overrides)


@pytest.fixture
def topic(kafka_bootstrap: str, namespace: str, unique_name: Callable[[str], str]) -> str:
    name = unique_name("dt")
    create_topic(kafka_bootstrap, name, namespace, partitions=4)
    return name


@pytest.fixture
def clients() -> Iterator[list[Any]]:
    """Clients to shut down when the test ends."""
    started: list[Any] = []
    yield started
    for client in reversed(started):
        client.shutdown()


def _message(topic: str, body: str, keys: str = "K", tags: str = "TagA") -> Message:
    msg = Message(topic)
    msg.set_keys(keys)
    msg.set_tags(tags)
    msg.set_body(body)
    msg.set_property("property", "test")
    return msg


def test_every_send_method_and_what_a_new_group_receives(
    connect: Connect, topic: str, clients: list[Any]
) -> None:
    producer = connect.producer("P", True)
    clients.append(producer)
    sync = producer.send_sync(_message(topic, "sync"))
    assert sync.status is SendStatus.OK and isinstance(sync.msg_id, str)
    assert isinstance(sync.offset, int) and sync.offset >= 0
    assert producer.send_oneway(_message(topic, "oneway")) is None
    orderly = [
        producer.send_orderly_with_sharding_key(_message(topic, f"o{i}"), "order1")
        for i in range(3)
    ]
    assert [r.status for r in orderly] == [SendStatus.OK] * 3
    producer.shutdown()  # waits for the oneway send

    received = Received()
    clients.append(started_consumer(connect, "brand-new-group", topic, received))
    assert wait_for(lambda: len(received.messages) >= 5)
    by_body = {m.body: m for m in received.messages}
    assert set(by_body) == {b"sync", b"oneway", b"o0", b"o1", b"o2"}
    first = by_body[b"sync"]
    assert first.id == sync.msg_id and first.topic == topic
    assert (first.keys, first.tags, first.get_property("property")) == (b"K", b"TagA", b"test")
    assert first[MessageProperty.UNIQ_CLIENT_MESSAGE_ID_KEYIDX] == sync.msg_id.encode()
    assert first.queue_offset == sync.offset and first.reconsume_times == 0
    assert first.born_timestamp <= first.store_timestamp + 1000 and first.store_size > 4
    ordered = [by_body[b"o%d" % i] for i in range(3)]
    assert len({m.queue_id for m in ordered}) == 1  # one sharding key, one partition
    assert [m.queue_offset for m in ordered] == sorted(m.queue_offset for m in ordered)
    assert [m.queue_offset for m in ordered] == [r.offset for r in orderly]


def test_reconsume_later_and_none_redeliver_with_reconsume_times(
    connect: Connect, topic: str, clients: list[Any], start_forwarder: Any
) -> None:
    """None counts as RECONSUME_LATER: the message comes back (10 s later, level 3 of
    RocketMQ's ladder, through the forwarder) with reconsume_times 1."""
    start_forwarder("1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h")
    received = Received(lambda msg: None if msg.reconsume_times == 0 else 0)
    clients.append(started_consumer(connect, "G", topic, received))
    producer = connect.producer()
    clients.append(producer)
    msg_id = producer.send_sync(_message(topic, "again")).msg_id
    assert wait_for(lambda: len(received.messages) >= 2, timeout=40)
    time.sleep(1)
    assert [(m.id, m.reconsume_times) for m in received.messages] == [(msg_id, 0), (msg_id, 1)]


def test_settings_given_after_construction_apply_at_start(
    connect: Connect, topic: str, clients: list[Any]
) -> None:
    consumer = connect(PushConsumer("G"))
    consumer.set_thread_count(3)
    consumer.set_message_batch_max_size(4)
    consumer.set_instance_name("inst-7")
    consumer.set_message_model(MessageModel.BROADCASTING)
    consumer.subscribe(topic, Received(), "TagA || TagB")
    consumer.start()
    clients.append(consumer)
    settings = consumer._native.settings
    assert (settings.consume_thread_max, settings.consume_message_batch_max_size) == (3, 4)
    assert settings.broadcasting
    assert settings.client.kafka_config["client.id"] == "inst-7"


def test_set_message_trace_switches_each_clients_trace_events(
    connect: Connect, topic: str, clients: list[Any]
) -> None:
    traced, untraced = connect(Producer("traced")), connect(Producer("untraced"))
    untraced.set_message_trace(False)
    got = {"G-on": Received(), "G-off": Received()}
    on = started_consumer(connect, "G-on", topic, got["G-on"])
    off = connect(PushConsumer("G-off"))
    off.set_message_trace(False)
    off.subscribe(topic, got["G-off"])
    off.start()
    clients += [on, off]
    ids = {}
    for producer, body in ((traced, "on"), (untraced, "off")):
        producer.start()
        clients.append(producer)
        ids[body] = producer.send_sync(_message(topic, body)).msg_id
    assert wait_for(lambda: all(len(r.ids()) == 2 for r in got.values()))
    for client in clients:
        client.shutdown()  # writes what each trace sink holds
    clients.clear()

    def seen(events: list[dict[str, Any]]) -> set[tuple[str, Any, str]]:
        return {(e["event"], e["group"], e["msg_id"]) for e in events}

    everything = {("PUBLISH", None, ids["on"]), ("CONSUME", "G-on", ids["on"])}
    everything.add(("CONSUME", "G-on", ids["off"]))
    events = trace_events(connect.bootstrap, connect.namespace, lambda e: seen(e) >= everything)
    assert seen(events) == everything  # nothing of the untraced producer or group


def test_tag_expression_filters(connect: Connect, topic: str, clients: list[Any]) -> None:
    received = Received()
    consumer = connect(PushConsumer("G"))
    consumer.subscribe(topic, received, "TagB")
    consumer.start()
    clients.append(consumer)
    producer = connect.producer()
    clients.append(producer)
    producer.send_sync(_message(topic, "a", tags="TagA"))
    producer.send_sync(_message(topic, "b", tags="TagB"))
    assert wait_for(lambda: len(received.messages) >= 1)
    time.sleep(1)
    assert [m.body for m in received.messages] == [b"b"]


def test_broadcasting_gives_every_consumer_every_message(
    connect: Connect, topic: str, clients: list[Any], tmp_path: Any
) -> None:
    first, second = Received(), Received()
    for callback in (first, second):
        consumer = connect(PushConsumer("B", message_model=MessageModel.BROADCASTING))
        consumer.subscribe(topic, callback)
        consumer.start()
        clients.append(consumer)
    producer = connect.producer()
    clients.append(producer)
    msg_id = producer.send_sync(_message(topic, "all")).msg_id
    assert wait_for(lambda: first.ids() == [msg_id] and second.ids() == [msg_id])


def test_send_failures_raise_upstreams_classes(
    connect: Connect, topic: str, clients: list[Any]
) -> None:
    producer = connect(Producer("P", max_message_size=8))
    # whether a missing topic appears is the broker's policy; here it may not
    producer.set_kafka_config({**connect.overrides, "allow.auto.create.topics": False})
    producer.start()
    clients.append(producer)
    with pytest.raises(ProducerSendSyncFailed) as caught:
        producer.send_sync(_message("NoSuchTopicHere", "x"))
    assert isinstance(caught.value.__cause__, FatalSendError)
    with pytest.raises(ProducerSendSyncFailed) as caught:
        producer.send_sync(_message(topic, "nine bytes"))
    assert isinstance(caught.value.__cause__, MessageTooLargeError)
    with pytest.raises(ProducerSendOnewayFailed):
        producer.send_oneway(_message(topic, "nine bytes"))
    with pytest.raises(ProducerSendOrderlyFailed):
        producer.send_orderly_with_sharding_key(_message(topic, "nine bytes"), "k")


def test_with_statement_starts_and_shuts_down(connect: Connect, topic: str) -> None:
    producer = connect(Producer("P"))
    with producer as bound:
        assert bound is producer
        assert producer.send_sync(_message(topic, "w")).status is SendStatus.OK
    with pytest.raises(ProducerSendSyncFailed):
        producer.send_sync(_message(topic, "after"))


def test_session_credentials_are_sent_as_sasl(connect: Connect) -> None:
    """The test broker speaks PLAINTEXT, so a client that talks SASL_SSL to it gets no
    answer: start() fails as upstream's ProducerStartFailed."""
    producer = Producer("P", timeout=1500)
    producer.set_name_server_address(connect.bootstrap)
    producer.set_session_credentials("AK", "SK", "ALIYUN")
    with pytest.raises(ProducerStartFailed) as caught:
        producer.start()
    assert isinstance(caught.value.__cause__, BrokerUnreachableError)


def test_start_with_no_subscription_fails(connect: Connect) -> None:
    from rmqcompat.exceptions import PushConsumerStartFailed

    with pytest.raises(PushConsumerStartFailed):
        connect(PushConsumer("testGroup")).start()


def test_a_callback_that_raises_does_not_stop_the_consumer(
    connect: Connect, topic: str, clients: list[Any]
) -> None:
    def callback(msg: Any) -> Any:
        if msg.body == b"bad":
            raise ValueError("poison")
        return ConsumeStatus.CONSUME_SUCCESS

    received = Received(callback)
    consumer = started_consumer(connect, "G", topic, received)
    clients.append(consumer)
    producer = connect.producer()
    clients.append(producer)
    producer.send_sync(_message(topic, "bad"))
    producer.send_sync(_message(topic, "good"))
    assert wait_for(lambda: b"good" in [m.body for m in received.messages])
    assert consumer._native.healthy()


def test_orderly_consumer_retries_in_place_and_keeps_order(
    connect: Connect, topic: str, clients: list[Any]
) -> None:
    """PushConsumer(orderly=True): a message not consumed suspends its partition and is
    retried in place (reconsume_times + 1); the messages behind it wait their turn."""
    producer = connect.producer("P", True)
    clients.append(producer)

    seen: list[tuple[bytes, int]] = []  # at call time: a retried message is the same object

    def answer(msg: Any) -> Any:
        seen.append((msg.body, msg.reconsume_times))
        if msg.body == b"o1" and msg.reconsume_times < 2:
            return None if msg.reconsume_times == 0 else ConsumeStatus.RECONSUME_LATER
        return ConsumeStatus.CONSUME_SUCCESS

    received = Received(answer)
    consumer = started_consumer(connect, "GO", topic, received, orderly=True)
    clients.append(consumer)
    for i in range(4):
        producer.send_orderly_with_sharding_key(_message(topic, f"o{i}"), "order1")
    assert wait_for(lambda: len(received.messages) >= 6)
    time.sleep(1)
    assert seen == [(b"o0", 0), (b"o1", 0), (b"o1", 1), (b"o1", 2), (b"o2", 0), (b"o3", 0)]
