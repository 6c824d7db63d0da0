"""Upstream's per-message callbacks as native listeners.

A callback takes one :class:`ReceivedMessage` and returns a ``ConsumeStatus`` (or its
integer value, as upstream's C binding takes it). Anything else, None included, and any
exception count as RECONSUME_LATER and are logged; the consumer carries on.

Each topic has its callback; a message of a topic with none (a retry of a topic the group
no longer subscribes) goes to the callback registered last, the only one upstream's C
client keeps.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from rmqcompat.consumer.listener import (
    ConsumeConcurrentlyContext,
    ConsumeConcurrentlyStatus,
    ConsumeOrderlyContext,
    ConsumeOrderlyStatus,
    MessageListenerOrderly,
)
from rmqcompat.dropin.enums import ConsumeStatus, as_status
from rmqcompat.dropin.message import ReceivedMessage
from rmqcompat.message import MessageExt

_log = logging.getLogger("rmqcompat.client")

Callback = Callable[[ReceivedMessage], Any]

#: rocketmq-client-cpp 2.x's orderly pause: 1 s after a failure while the message failed
#: at most this many times before, 5 s after that.
ORDERLY_SHORT_PAUSE_UNTIL = 15
ORDERLY_SHORT_PAUSE_MS = 1000
ORDERLY_LONG_PAUSE_MS = 5000


class TopicCallbacks:
    """The callback of each topic; a topic without one gets the last one registered."""

    def __init__(self, callbacks: Mapping[str, Callback]) -> None:
        if not callbacks:
            raise ValueError("at least one callback")
        self._callbacks = dict(callbacks)
        self._last = list(self._callbacks.values())[-1]

    def of(self, topic: str) -> Callback:
        return self._callbacks.get(topic, self._last)


def orderly_pause_ms(reconsume_times: int) -> int:
    """The C client's pause before a failed orderly message is consumed again."""
    if reconsume_times <= ORDERLY_SHORT_PAUSE_UNTIL:
        return ORDERLY_SHORT_PAUSE_MS
    return ORDERLY_LONG_PAUSE_MS


def consumed(callback: Callback, msg: MessageExt) -> bool:
    """True if ``callback`` consumed ``msg`` (returned CONSUME_SUCCESS)."""
    try:
        result = callback(ReceivedMessage(msg))
    except Exception:
        _log.exception("callback raised; RECONSUME_LATER (topic=%s, id=%s)", msg.topic, msg.msg_id)
        return False
    status = as_status(ConsumeStatus, result)
    if status is None:
        _log.warning(
            "callback returned %r, not a ConsumeStatus; RECONSUME_LATER (topic=%s, id=%s)",
            result,
            msg.topic,
            msg.msg_id,
        )
    return status is ConsumeStatus.CONSUME_SUCCESS


class ConcurrentCallbacks:
    """A native concurrent listener calling each message's topic callback in turn.

    The batch stops at the first message not consumed: it and the rest are retried
    (``ack_index``), the ones before it are done (upstream's C client retries the whole
    batch; retrying fewer is only fewer duplicates).
    """

    def __init__(self, callbacks: TopicCallbacks) -> None:
        self._callbacks = callbacks

    def consume_message(
        self, msgs: list[MessageExt], context: ConsumeConcurrentlyContext
    ) -> ConsumeConcurrentlyStatus:
        for index, msg in enumerate(msgs):
            if not consumed(self._callbacks.of(msg.topic), msg):
                if index == 0:
                    return ConsumeConcurrentlyStatus.RECONSUME_LATER
                context.ack_index = index - 1
                break
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS


class OrderlyCallbacks(MessageListenerOrderly):
    """A native orderly listener, one message per call (the consumer is made with a batch
    size of 1, as the C client takes them): CONSUME_SUCCESS -> SUCCESS; anything else (or
    an exception) suspends the partition for :func:`orderly_pause_ms` and retries the same
    message in place."""

    def __init__(self, callbacks: TopicCallbacks) -> None:
        self._callbacks = callbacks

    def consume_message(
        self, msgs: list[MessageExt], context: ConsumeOrderlyContext
    ) -> ConsumeOrderlyStatus:
        for msg in msgs:
            if not consumed(self._callbacks.of(msg.topic), msg):
                context.suspend_current_queue_time_millis = orderly_pause_ms(msg.reconsume_times)
                return ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT
        return ConsumeOrderlyStatus.SUCCESS
