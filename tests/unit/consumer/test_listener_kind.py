"""A listener of one consume mode answering with the other mode's status is refused
clearly (at registration from its annotations, else at its first answer), rather than run
in the wrong mode: a ``ConsumeOrderlyStatus`` read as a foreign value by a concurrent
consumer would send every message back, and a ``ConsumeConcurrentlyStatus`` from an
orderly listener would suspend its queue forever."""

from __future__ import annotations

import time

import pytest
from unit_fakes import AcceptingSink

from rmqcompat import DefaultMQPushConsumer
from rmqcompat.config import ClientConfig
from rmqcompat.consumer.concurrent import ConcurrentConsumeService
from rmqcompat.consumer.dispatch import WorkerPool
from rmqcompat.consumer.listener import (
    ConsumeConcurrentlyContext,
    ConsumeConcurrentlyStatus,
    ConsumeOrderlyContext,
    ConsumeOrderlyStatus,
    MessageListenerOrderly,
    check_listener_kind,
)
from rmqcompat.consumer.orderly import OrderlyConsumeService, orderly_policy
from rmqcompat.consumer.partitions import Partitions
from rmqcompat.consumer.sendback import SendBack
from rmqcompat.consumer.settings import ConsumerSettings
from rmqcompat.errors import ListenerKindError
from rmqcompat.message import MessageExt, MessageQueue

KEY = ("T", 0)


class OrderlyAnswersNotOrderly:
    def consume_message(
        self, msgs: list[MessageExt], context: ConsumeConcurrentlyContext
    ) -> ConsumeOrderlyStatus:
        return ConsumeOrderlyStatus.SUCCESS


class ConcurrentAnswersButOrderly(MessageListenerOrderly):
    def consume_message(
        self, msgs: list[MessageExt], context: ConsumeOrderlyContext
    ) -> ConsumeConcurrentlyStatus | None:
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS


class Orderly(MessageListenerOrderly):
    def consume_message(
        self, msgs: list[MessageExt], context: ConsumeOrderlyContext
    ) -> ConsumeOrderlyStatus | None:
        return ConsumeOrderlyStatus.SUCCESS


class Concurrent:
    def consume_message(
        self, msgs: list[MessageExt], context: ConsumeConcurrentlyContext
    ) -> ConsumeConcurrentlyStatus:
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS


def _consumer() -> DefaultMQPushConsumer:
    return DefaultMQPushConsumer("g", "127.0.0.1:1")


def test_registration_refuses_an_orderly_answer_on_a_concurrent_listener() -> None:
    with pytest.raises(ListenerKindError, match="MessageListenerOrderly"):
        _consumer().register_message_listener(OrderlyAnswersNotOrderly())


def test_registration_refuses_a_concurrent_answer_on_an_orderly_listener() -> None:
    with pytest.raises(ListenerKindError, match="ConsumeConcurrentlyStatus"):
        _consumer().register_message_listener(ConcurrentAnswersButOrderly())


def test_listeners_declared_for_their_own_mode_or_not_at_all_are_accepted() -> None:
    for listener in (Orderly(), Concurrent(), lambda msgs, ctx: None, "not inspectable"):
        check_listener_kind(listener, orderly=isinstance(listener, MessageListenerOrderly))


def _settings() -> ConsumerSettings:
    return ConsumerSettings("g", ClientConfig("127.0.0.1:1"))


def _messages(partitions: Partitions, count: int) -> list[MessageExt]:
    partitions.add(KEY, MessageQueue("T", 0), 0)
    msgs = [MessageExt("T", b"x", f"m{i}", 0, i, 0, 0) for i in range(count)]
    for msg in msgs:
        partitions.get(KEY).pq.add(msg.queue_offset, 1)
    return msgs


def _settle_until_raised(settle, wait) -> ListenerKindError:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        wait(0.05)
        try:
            settle()
        except ListenerKindError as exc:
            return exc
    raise AssertionError("the listener's answer was not refused")


def test_an_unannotated_concurrent_listener_answering_orderly_stops_the_consumer_keeping_all() -> (
    None
):
    settings = _settings()
    partitions = Partitions(settings, lambda offsets, asynchronous: None)
    sink = AcceptingSink()
    pool = WorkerPool(lambda msgs, ctx: ConsumeOrderlyStatus.SUCCESS, "g", 1, time.monotonic)
    sendback = SendBack(sink, settings.retry_policy(), "", now_ms=lambda: 0)
    service = ConcurrentConsumeService(settings, pool, sendback, partitions, time.monotonic)
    msgs = _messages(partitions, 2)
    service.submit({KEY: msgs})
    error = _settle_until_raised(service.settle, service.wait)
    assert "not a MessageListenerOrderly" in str(error)
    assert sink.topics == []  # nothing sent back or dead-lettered
    assert partitions.get(KEY).pq.commit_offset() == 0  # nothing committed past them
    service.shutdown()


def test_an_orderly_listener_answering_concurrently_stops_the_consumer_keeping_all() -> None:
    settings = _settings()
    partitions = Partitions(settings, lambda offsets, asynchronous: None, orderly=True)
    sink = AcceptingSink()
    sendback = SendBack(sink, orderly_policy(settings), "", now_ms=lambda: 0)
    listener = lambda msgs, ctx: ConsumeConcurrentlyStatus.CONSUME_SUCCESS  # noqa: E731
    service = OrderlyConsumeService(settings, listener, sendback, partitions)
    msgs = _messages(partitions, 2)
    service.submit({KEY: msgs})
    error = _settle_until_raised(service.settle, service.wait)
    assert "ConsumeConcurrentlyStatus" in str(error)
    assert sink.topics == []
    assert partitions.get(KEY).pq.commit_offset() == 0
    service.shutdown()
