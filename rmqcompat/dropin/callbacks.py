"""Upstream's per-message callbacks as native listeners.

A callback takes one :class:`ReceivedMessage` and returns a ``ConsumeStatus`` (or its
integer value, as upstream's C binding takes it). Anything else, None included, and any
exception count as RECONSUME_LATER and are logged; the consumer carries on.
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

    def __init__(self, callbacks: Mapping[str, Callback]) -> None:
        self._callbacks = dict(callbacks)

    def consume_message(
        self, msgs: list[MessageExt], context: ConsumeConcurrentlyContext
    ) -> ConsumeConcurrentlyStatus:
        for index, msg in enumerate(msgs):
            if not consumed(self._callbacks[msg.topic], msg):
                if index == 0:
                    return ConsumeConcurrentlyStatus.RECONSUME_LATER
                context.ack_index = index - 1
                break
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS


class OrderlyCallbacks(MessageListenerOrderly):
    """A native orderly listener: CONSUME_SUCCESS -> SUCCESS; anything else (or an
    exception) suspends the partition a moment and retries the same message in place."""

    def __init__(self, callbacks: Mapping[str, Callback]) -> None:
        self._callbacks = dict(callbacks)

    def consume_message(
        self, msgs: list[MessageExt], context: ConsumeOrderlyContext
    ) -> ConsumeOrderlyStatus:
        for msg in msgs:
            if not consumed(self._callbacks[msg.topic], msg):
                return ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT
        return ConsumeOrderlyStatus.SUCCESS
