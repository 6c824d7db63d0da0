"""The RocketMQ 5 SimpleConsumer on Apache Kafka: receive, ack, invisible time, DLQ."""

from __future__ import annotations

import pytest
from v5_helpers import message, read_dlq, receive_until

from rmqcompat import properties as props
from rmqcompat.v5 import FilterExpression, FilterType, Message, SimpleConsumer
from rmqcompat.v5.exceptions import (
    BadRequestException,
    IllegalArgumentException,
    IllegalStateException,
    UnsupportedException,
)


@pytest.fixture
def consumer_of(setup, started, unique_name):
    def make(subscription=None, group=None, **kwargs) -> SimpleConsumer:
        subscription = {"Jobs": FilterExpression()} if subscription is None else subscription
        group = group or unique_name("g")
        return started(SimpleConsumer(setup, group, subscription, await_duration=1, **kwargs))

    return make


def test_receive_and_ack_deliver_each_message_once_with_its_fields(send, consumer_of):
    ids = send("Jobs", b"a", b"b", b"c", tag="T1")
    consumer = consumer_of()
    got = receive_until(consumer, 3)
    assert sorted(m.message_id for m in got) == sorted(ids)
    for msg in got:
        assert isinstance(msg, Message)
        assert (msg.topic, msg.tag, msg.delivery_attempt) == ("Jobs", "T1", 1)
        assert msg.receipt_handle and msg.born_timestamp
        consumer.ack(msg)
    assert consumer.receive(16, 10) == []  # acked: nothing comes back


def test_an_unacked_message_comes_back_after_its_invisible_time_with_attempt_two(send, consumer_of):
    (msg_id,) = send("Jobs", b"late")
    consumer = consumer_of()
    (first,) = receive_until(consumer, 1, invisible_s=1)
    (again,) = receive_until(consumer, 1, invisible_s=30)
    assert (again.message_id, again.delivery_attempt) == (msg_id, 2)
    with pytest.raises(BadRequestException) as caught:  # its invisible time is over
        consumer.ack(first)
    assert caught.value.code == 40013
    consumer.ack(again)


def test_change_invisible_duration_gives_a_new_handle_and_refuses_the_old_one(send, consumer_of):
    send("Jobs", b"x")
    consumer = consumer_of()
    (msg,) = receive_until(consumer, 1, invisible_s=1)
    stale = message("Jobs", b"x")
    stale.receipt_handle = msg.receipt_handle
    consumer.change_invisible_duration(msg, 30)  # restarts the timer: 30 s from now
    assert msg.receipt_handle != stale.receipt_handle
    with pytest.raises(BadRequestException) as caught:
        consumer.ack(stale)
    assert caught.value.code == 40013
    assert consumer.receive(16, 30) == []  # still invisible after the first 1 s
    consumer.ack(msg)


@pytest.mark.slow
def test_after_max_attempts_the_message_goes_to_the_groups_dlq(
    send, consumer_of, unique_name, kafka_bootstrap, namespace, client_overrides
):
    (msg_id,) = send("Jobs", b"poison")
    group = unique_name("g")
    consumer = consumer_of(group=group, max_attempts=3)
    attempts = [receive_until(consumer, 1, invisible_s=1)[0].delivery_attempt for _ in range(3)]
    assert attempts == [1, 2, 3]
    (dead,) = read_dlq(kafka_bootstrap, namespace, group, client_overrides, 1)
    assert dead[props.ORIGIN_MESSAGE_ID] == msg_id and dead[props.RETRY_TOPIC] == "Jobs"
    assert consumer.receive(16, 30) == []


def test_async_variants_and_tag_filter(send, consumer_of):
    send("Jobs", b"skip", tag="B")
    (wanted,) = send("Jobs", b"keep", tag="A")
    consumer = consumer_of({"Jobs": FilterExpression("A")})
    got = consumer.receive_async(16, 30).result(timeout=60)
    while not got:
        got = consumer.receive_async(16, 30).result(timeout=60)
    (msg,) = got
    assert msg.message_id == wanted
    consumer.change_invisible_duration_async(msg, 20).result(timeout=5)
    assert consumer.ack_async(msg).result(timeout=5) is None
    with pytest.raises(BadRequestException):
        consumer.ack_async(msg).result(timeout=5)


def test_subscribe_and_unsubscribe_while_running(send, consumer_of):
    consumer = consumer_of({})
    with pytest.raises(IllegalArgumentException, match="no topic to receive"):
        consumer.receive(1, 10)
    consumer.subscribe("Other")
    (other,) = send("Other", b"o")
    assert [m.message_id for m in receive_until(consumer, 1)] == [other]
    consumer.unsubscribe("Other")
    send("Other", b"not for us")
    with pytest.raises(IllegalArgumentException, match="no topic to receive"):
        consumer.receive(1, 10)
    assert consumer.subscriptions() == {}


def test_bad_input_is_refused_with_upstreams_exceptions(setup, consumer_of):
    with pytest.raises(IllegalArgumentException, match="consumerGroup should not be null"):
        SimpleConsumer(setup, " ")
    with pytest.raises(UnsupportedException):
        SimpleConsumer(setup, "g", {"Jobs": FilterExpression("a > 1", FilterType.SQL)})
    with pytest.raises(IllegalArgumentException, match="topic"):
        SimpleConsumer(setup, "g", {"bad topic!": FilterExpression()})
    idle = SimpleConsumer(setup, "g", {"Jobs": FilterExpression()})
    with pytest.raises(IllegalStateException, match="not running"):
        idle.receive(1, 10)
    consumer = consumer_of()
    with pytest.raises(IllegalArgumentException, match="whole seconds"):
        consumer.receive(1, 1.5)
    with pytest.raises(IllegalArgumentException, match="greater than 0"):
        consumer.receive(0, 10)
    with pytest.raises(IllegalArgumentException, match="within"):
        consumer.receive(1, 13 * 3600)
    with pytest.raises(IllegalArgumentException, match="must be a Message"):
        consumer.ack("not a message")
    with pytest.raises(UnsupportedException):
        consumer.subscribe("Other", FilterExpression("a > 1", FilterType.SQL))


def test_fifo_a_group_gets_its_next_message_only_after_the_previous_is_acked(send, consumer_of):
    send("Jobs", b"g-0", b"g-1", message_group="g")
    send("Jobs", b"h-0", message_group="h")
    consumer = consumer_of()
    first = receive_until(consumer, 2, invisible_s=1)
    assert sorted(m.body for m in first) == [b"g-0", b"h-0"]
    consumer.ack(next(m for m in first if m.body == b"h-0"))
    # g-0 not acked: it comes back in place (attempt 2) before g-1
    (again,) = receive_until(consumer, 1, invisible_s=30)
    assert (again.body, again.delivery_attempt) == (b"g-0", 2)
    consumer.ack(again)
    (after,) = receive_until(consumer, 1, invisible_s=30)
    assert (after.body, after.delivery_attempt, after.message_group) == (b"g-1", 1, "g")
    consumer.ack(after)
