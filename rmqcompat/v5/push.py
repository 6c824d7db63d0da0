"""``PushConsumer``, ``MessageListener`` and ``ConsumeResult``: RocketMQ 5 push consumption.

Each message is handed to ``MessageListener.consume`` on one of
``consumption_thread_count`` threads (per subscribed topic). ``SUCCESS`` acks it.
``FAILURE``, any other answer or an exception fails the attempt:

- a message without a group is sent back through the delay forwarder to
  ``%RETRY%<group>`` and delivered again after the retry policy's wait for that attempt
  (:mod:`.backoff`: 1 s, 5 s, 10 s, 30 s, 1 min ... 2 h), with ``delivery_attempt`` + 1;
  after ``max_attempts`` (17) it goes to ``%DLQ%<group>``;
- a FIFO message (``message_group``) is retried in place after the same waits, its
  successors in the group held back meanwhile (:mod:`.lanes`), and dead-lettered when
  its attempts are used up, as upstream's FIFO consumption does.

Offsets are committed only past settled messages (acked, parked for retry or
dead-lettered, acknowledged by Kafka): a crash redelivers, never loses.
"""

from __future__ import annotations

import abc
import enum
import logging
import threading
from collections.abc import Mapping
from typing import Any

from rmqcompat.consumer import ConsumeConcurrentlyContext, ConsumeConcurrentlyStatus
from rmqcompat.message import MessageExt
from rmqcompat.retry.decision import DLQ_NOW
from rmqcompat.v5.backoff import CustomizedBackoff
from rmqcompat.v5.config import ClientConfiguration
from rmqcompat.v5.consumer_base import ConsumerBase
from rmqcompat.v5.exceptions import IllegalArgumentException
from rmqcompat.v5.filter import FilterExpression
from rmqcompat.v5.message import Message
from rmqcompat.v5.native import DEFAULT_MAX_ATTEMPTS, CoreLimits

_log = logging.getLogger("rmqcompat.v5")


class ConsumeResult(enum.Enum):
    SUCCESS = 0
    FAILURE = 1


class MessageListener(abc.ABC):
    @abc.abstractmethod
    def consume(self, message: Message) -> ConsumeResult:
        """SUCCESS acks the message; FAILURE (or an exception) retries it."""


class _Attempts:
    """Calls the listener for one message; FIFO messages retry here, in place."""

    def __init__(
        self, listener: MessageListener, namespace: str, backoff: CustomizedBackoff
    ) -> None:
        self._listener = listener
        self._namespace = namespace
        self._backoff = backoff
        self.closing = threading.Event()

    def __call__(
        self, msgs: list[MessageExt], context: ConsumeConcurrentlyContext
    ) -> ConsumeConcurrentlyStatus:
        ext = msgs[0]  # batches of one (the core's default)
        message = Message.received(ext, self._namespace, None)
        attempt = message.delivery_attempt or 1
        while not self._consumed(message):
            if message.message_group is None:
                context.delay_level_when_next_consume = self._backoff.level(attempt)
                return ConsumeConcurrentlyStatus.RECONSUME_LATER
            if attempt >= self._backoff.max_attempts:
                context.delay_level_when_next_consume = DLQ_NOW
                return ConsumeConcurrentlyStatus.RECONSUME_LATER
            if self.closing.wait(self._backoff.get_next_attempt_delay(attempt)):
                # shutting down: the send-back path keeps it, out of its group's order
                context.delay_level_when_next_consume = self._backoff.level(attempt)
                return ConsumeConcurrentlyStatus.RECONSUME_LATER
            attempt += 1
            ext.reconsume_times += 1
            message = Message.received(ext, self._namespace, None)
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    def _consumed(self, message: Message) -> bool:
        try:
            result = self._listener.consume(message)
        except Exception:
            _log.exception(
                "listener raised for message %s of topic %s; FAILURE",
                message.message_id,
                message.topic,
            )
            return False
        return result is ConsumeResult.SUCCESS


class PushConsumer(ConsumerBase):
    """``PushConsumer(client_configuration, consumer_group, message_listener,
    subscription, max_cache_message_count=1024, max_cache_message_size=64 MiB,
    consumption_thread_count=20)``; rmqcompat extension: ``max_attempts`` (17).

    ``max_cache_message_count``/``size`` bound the messages cached per partition (the
    core's flow-control thresholds); a stuck FIFO group's waiting messages count too.

    Raises (constructor, no I/O): IllegalArgumentException (no listener, no
    subscription, bad names), UnsupportedException (an SQL92 filter).
    """

    def __init__(
        self,
        client_configuration: ClientConfiguration,
        consumer_group: str,
        message_listener: MessageListener,
        subscription: Mapping[str, FilterExpression],
        max_cache_message_count: int = 1024,
        max_cache_message_size: int = 64 * 1024 * 1024,
        consumption_thread_count: int = 20,
        *,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    ) -> None:
        if not message_listener:
            raise IllegalArgumentException("message_listener should not be null")
        if not subscription:
            raise IllegalArgumentException("subscription should not be null")
        if not isinstance(consumption_thread_count, int) or consumption_thread_count < 1:
            raise IllegalArgumentException("consumption_thread_count must be an int >= 1")
        limits = CoreLimits(
            consumption_thread_count,
            max_attempts,
            max_cache_message_count,
            max_cache_message_size / (1024 * 1024),
        )
        super().__init__(client_configuration, consumer_group, subscription, limits)
        self._listener = message_listener
        self._backoff = CustomizedBackoff(client_configuration.client.levels, max_attempts)
        self._attempts: dict[str, _Attempts] = {}

    def __str__(self) -> str:
        return f"PUSH_CONSUMER:{self.consumer_group}"

    def _listener_for(self, topic: str) -> Any:
        attempts = _Attempts(self._listener, self._config.namespace, self._backoff)
        self._attempts[topic] = attempts
        return attempts

    def _closing(self, topic: str) -> None:
        self._attempts.pop(topic).closing.set()
