"""The orderly listener API: names exported where RocketMQ users look for them, an abstract
base class, and a context whose suspension starts at RocketMQ's -1 (the default)."""

from __future__ import annotations

import pytest

import rmqcompat
from rmqcompat import consumer
from rmqcompat.consumer.listener import DEFAULT_SUSPEND_CURRENT_QUEUE_TIME_MILLIS
from rmqcompat.message import MessageQueue


@pytest.mark.parametrize(
    "name", ["MessageListenerOrderly", "ConsumeOrderlyStatus", "ConsumeOrderlyContext"]
)
def test_the_orderly_names_are_exported(name):
    assert name in rmqcompat.__all__ and name in consumer.__all__
    assert getattr(rmqcompat, name) is getattr(consumer, name)


def test_a_listener_must_implement_consume_message():
    class Incomplete(rmqcompat.MessageListenerOrderly):
        pass

    with pytest.raises(TypeError):
        Incomplete()  # type: ignore[abstract]


def test_the_statuses_are_rocketmqs():
    assert [s.name for s in rmqcompat.ConsumeOrderlyStatus] == [
        "SUCCESS",
        "SUSPEND_CURRENT_QUEUE_A_MOMENT",
    ]


def test_the_context_starts_at_the_default_and_is_settable():
    context = rmqcompat.ConsumeOrderlyContext(MessageQueue("T", 3))
    assert context.suspend_current_queue_time_millis == -1
    assert DEFAULT_SUSPEND_CURRENT_QUEUE_TIME_MILLIS == 1000
    context.suspend_current_queue_time_millis = 250
    assert context.suspend_current_queue_time_millis == 250
    assert context.message_queue.queue_id == 3
