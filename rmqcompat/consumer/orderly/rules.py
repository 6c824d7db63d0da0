"""Orderly consumption's rules (SEMANTICS section 8), pure: no I/O, no clock, no threads.

RocketMQ 4.x ``ConsumeMessageOrderlyService``: a listener result other than SUCCESS
suspends the partition; the suspended batch is consumed again after the context's
``suspend_current_queue_time_millis`` (-1: the consumer's 1000 ms), clamped to
10..30000 ms; a message that already failed ``max_reconsume_times`` times goes to the
dead-letter topic instead, and the others count one more failure. Unlike concurrent
consumption, a ``max_reconsume_times`` of -1 means unlimited (Java's Integer.MAX_VALUE).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rmqcompat.consumer.listener import (
    MAX_INT,
    ConsumeOrderlyContext,
    ConsumeOrderlyStatus,
    refuse_concurrent_status,
)
from rmqcompat.message import MessageExt
from rmqcompat.retry import USE_DEFAULT_MAX, DestinationKind, RetryPolicy, route_failed

_log = logging.getLogger("rmqcompat.consumer")

#: RocketMQ clamps every suspension to this range (``submitConsumeRequestLater``).
SUSPEND_MIN_MS = 10
SUSPEND_MAX_MS = 30_000

SUCCESS = ConsumeOrderlyStatus.SUCCESS
SUSPEND = ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT

OrderlyListenerFn = Callable[[list[MessageExt], ConsumeOrderlyContext], Any]


def suspend_millis(requested: object, default_ms: int) -> int:
    """The pause before a suspended batch is consumed again: ``requested`` (the context's
    value; -1: ``default_ms``, the consumer's ``suspend_current_queue_time_millis``),
    clamped to 10..30000 ms as RocketMQ does. A finite float is truncated; any other value
    (a string, None, NaN) counts as -1, with a warning."""
    if isinstance(requested, float) and math.isfinite(requested):
        requested = int(requested)
    if isinstance(requested, bool) or not isinstance(requested, int):
        _log.warning(
            "suspend_current_queue_time_millis=%r is not a number of milliseconds; using %d",
            requested,
            default_ms,
        )
        requested = -1
    wanted = default_ms if requested == -1 else requested
    return min(max(wanted, SUSPEND_MIN_MS), SUSPEND_MAX_MS)


def orderly_max_reconsume_times(configured: int) -> int:
    """The limit in force for an orderly consumer: -1 (the default) means unlimited, Java's
    Integer.MAX_VALUE (RocketMQ's orderly ``getMaxReconsumeTimes``); concurrent consumers
    read the same -1 as 16 (:func:`rmqcompat.retry.max_reconsume_times_of`)."""
    return MAX_INT if configured == USE_DEFAULT_MAX else configured


def as_orderly_status(result: object) -> ConsumeOrderlyStatus:
    """A listener's return value as a status: anything but SUCCESS suspends (None too)."""
    return SUCCESS if result is SUCCESS else SUSPEND


def invoke_orderly(
    fn: OrderlyListenerFn, group: str, msgs: list[MessageExt], context: ConsumeOrderlyContext
) -> tuple[ConsumeOrderlyStatus, bool]:
    """Call the listener; None, a foreign value or an exception count as a suspension.

    Returns the status and whether the listener raised (traced as EXCEPTION). The
    listener's exception is logged with group, topic, partition and message ids, never
    raised.

    Raises:
        ListenerKindError: the listener answered with a ``ConsumeConcurrentlyStatus``.
    """
    queue = context.message_queue
    try:
        result = fn(msgs, context)
    except Exception:
        _log.exception(
            "orderly listener raised; suspending (group=%s, topic=%s, partition=%s, msg_ids=%s)",
            group,
            queue.topic,
            queue.queue_id,
            _ids(msgs),
        )
        return SUSPEND, True
    refuse_concurrent_status(fn, result)
    status = as_orderly_status(result)
    if status is SUSPEND and result is not SUSPEND:
        _log.warning(
            "orderly listener returned %r; suspending (group=%s, topic=%s, partition=%s, "
            "msg_ids=%s)",
            result,
            group,
            queue.topic,
            queue.queue_id,
            _ids(msgs),
        )
    return status, False


@dataclass(frozen=True)
class SuspendOutcome:
    """A suspended batch split by RocketMQ's ``checkReconsumeTimes``: ``retry`` is consumed
    again in place (each with one more failure), ``dead`` goes to the dead-letter topic."""

    retry: tuple[MessageExt, ...]
    dead: tuple[MessageExt, ...]


def split_suspended(msgs: Sequence[MessageExt], policy: RetryPolicy) -> SuspendOutcome:
    """Which messages of a suspended batch are retried in place (the retry decision says
    SUSPEND) and which leave it (to the DLQ, or discarded: they already failed
    ``max_reconsume_times`` times); both keep the batch's order. Pure: counting the
    failure (``reconsume_times + 1``) is the caller's step."""
    retry: list[MessageExt] = []
    dead: list[MessageExt] = []
    for msg in msgs:
        kind = route_failed(policy, msg.reconsume_times).kind
        (retry if kind is DestinationKind.SUSPEND else dead).append(msg)
    return SuspendOutcome(tuple(retry), tuple(dead))


def _ids(msgs: Sequence[MessageExt]) -> str:
    return ",".join(m.msg_id for m in msgs)
