"""Listener vocabulary (RocketMQ 4.x names in snake_case) and the adapter that calls it.

A listener is a callable ``(msgs, context) -> ConsumeConcurrentlyStatus`` or an object
with such a ``consume_message`` method. ``None`` or an exception means RECONSUME_LATER.
"""

from __future__ import annotations

import abc
import enum
import logging
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from rmqcompat.core import CORE
from rmqcompat.errors import ListenerKindError
from rmqcompat.message import MessageExt, MessageQueue

_log = logging.getLogger("rmqcompat.consumer")

#: Java's Integer.MAX_VALUE: RocketMQ's initial ``ackIndex``.
MAX_INT = 2**31 - 1


class ConsumeConcurrentlyStatus(enum.Enum):
    CONSUME_SUCCESS = "CONSUME_SUCCESS"
    RECONSUME_LATER = "RECONSUME_LATER"


class MessageModel(enum.Enum):
    CLUSTERING = "CLUSTERING"
    BROADCASTING = "BROADCASTING"


class ConsumeFromWhere(enum.Enum):
    """Where a group with no stored offset starts (:mod:`~rmqcompat.consumer.positions`).

    A young partition starts at 0 under every policy (RocketMQ's broker rule). A retry
    topic starts at its beginning, or at its end under TIMESTAMP (as in RocketMQ).
    """

    CONSUME_FROM_LAST_OFFSET = "CONSUME_FROM_LAST_OFFSET"
    CONSUME_FROM_FIRST_OFFSET = "CONSUME_FROM_FIRST_OFFSET"
    CONSUME_FROM_TIMESTAMP = "CONSUME_FROM_TIMESTAMP"


class ConsumeConcurrentlyContext:
    """What a concurrent listener may read and set for the batch it is given.

    Attributes:
        message_queue: the queue (topic, partition) the batch came from.
        ack_index: on CONSUME_SUCCESS, messages ``[0..ack_index]`` succeeded and the rest
            failed (RocketMQ's rule; initially "max int", i.e. all succeeded).
        delay_level_when_next_consume: 0 = RocketMQ's ladder (level 3 + reconsume times),
            > 0 = that level, -1 = dead-letter at once.
        failed_indexes: opt-in per-message failure (not in RocketMQ). Indexes added here
            fail, whatever the status; when it is non-empty and the status is
            RECONSUME_LATER, *only* these indexes fail instead of the whole batch.
            Left empty, RocketMQ's rules apply unchanged.
        marked: ``failed_indexes`` once anybody asked for it, else None: settlement reads
            this, so a context whose listener never marks anything never builds a set
            (one context per listener call, built on the hot path).
    """

    __slots__ = ("ack_index", "delay_level_when_next_consume", "marked", "message_queue")

    def __init__(
        self,
        message_queue: MessageQueue,
        ack_index: int = MAX_INT,
        delay_level_when_next_consume: int = 0,
        failed_indexes: set[int] | None = None,
    ) -> None:
        self.message_queue = message_queue
        self.ack_index = ack_index
        self.delay_level_when_next_consume = delay_level_when_next_consume
        self.marked = failed_indexes

    @property
    def failed_indexes(self) -> set[int]:
        marked = self.marked
        if marked is None:
            marked = self.marked = set()
        return marked

    @failed_indexes.setter
    def failed_indexes(self, indexes: set[int]) -> None:
        self.marked = indexes

    def fail(self, index: int) -> None:
        """Mark the message at ``index`` of the batch as failed (see ``failed_indexes``)."""
        self.failed_indexes.add(index)

    def __repr__(self) -> str:
        return (
            f"ConsumeConcurrentlyContext(message_queue={self.message_queue!r}, "
            f"ack_index={self.ack_index}, delay_level_when_next_consume="
            f"{self.delay_level_when_next_consume}, failed_indexes={self.marked or set()})"
        )


#: The context class the consumers build: the core's where it is built (the same fields,
#: out of the cyclic collector's sight while it holds no set; ``native/src/consume_batch.rs``).
new_consume_context: type[ConsumeConcurrentlyContext] = (
    ConsumeConcurrentlyContext if CORE is None else CORE.ConsumeConcurrentlyContext
)

Status = ConsumeConcurrentlyStatus
_SUCCESS = Status.CONSUME_SUCCESS
_SUCCEEDED = (_SUCCESS, False)
ListenerFn = Callable[[list[MessageExt], ConsumeConcurrentlyContext], Any]


class MessageListenerConcurrently(Protocol):
    def consume_message(
        self, msgs: list[MessageExt], context: ConsumeConcurrentlyContext
    ) -> ConsumeConcurrentlyStatus | None: ...


class ConsumeOrderlyStatus(enum.Enum):
    """What an orderly listener returns for its batch (RocketMQ's deprecated binlog-only
    ROLLBACK and COMMIT are not offered)."""

    SUCCESS = "SUCCESS"
    SUSPEND_CURRENT_QUEUE_A_MOMENT = "SUSPEND_CURRENT_QUEUE_A_MOMENT"


#: RocketMQ's ``suspendCurrentQueueTimeMillis``: the pause before a suspended batch is
#: consumed again, unless its context says otherwise.
DEFAULT_SUSPEND_CURRENT_QUEUE_TIME_MILLIS = 1000


@dataclass
class ConsumeOrderlyContext:
    """What an orderly listener may read and set for the batch it is given.

    Attributes:
        message_queue: the queue (topic, partition) the batch came from.
        suspend_current_queue_time_millis: after SUSPEND_CURRENT_QUEUE_A_MOMENT (or None,
            or an exception), the same batch is consumed again after this many
            milliseconds, clamped to 10..30000 as RocketMQ does; -1 (the initial value)
            means the default, 1000 ms.
    """

    message_queue: MessageQueue
    suspend_current_queue_time_millis: int = -1


class MessageListenerOrderly(abc.ABC):
    """Base class of orderly listeners: registering one makes the consumer orderly.

    Each partition is consumed by one listener call at a time, in offset order (other
    partitions in parallel); a suspended batch is retried in place, so the messages
    after it wait (see README, "Orderly consumption").
    """

    @abc.abstractmethod
    def consume_message(
        self, msgs: list[MessageExt], context: ConsumeOrderlyContext
    ) -> ConsumeOrderlyStatus | None:
        """Consume ``msgs`` (one partition, in offset order). None or an exception
        counts as SUSPEND_CURRENT_QUEUE_A_MOMENT."""


def as_callable(listener: object) -> ListenerFn:
    """The function to call for ``listener`` (a callable or an object with consume_message).

    Raises:
        TypeError: ``listener`` is neither.
    """
    method = getattr(listener, "consume_message", None)
    if callable(method):
        return method  # type: ignore[no-any-return]
    if callable(listener):
        return listener
    raise TypeError("a listener is a callable (msgs, context) or has consume_message(msgs, ctx)")


def check_listener_kind(listener: object, orderly: bool) -> None:
    """Refuse a listener whose annotations name the other consume mode's status or context
    (a ``consume_message`` returning ``ConsumeOrderlyStatus`` on a class that is not a
    :class:`MessageListenerOrderly`, or the reverse). Unannotated listeners pass: their
    first answer is checked instead (:func:`invoke`, :func:`refuse_concurrent_status`).

    Raises:
        ListenerKindError: the listener is declared for the other mode.
    """
    fn = getattr(listener, "consume_message", listener)
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # unresolvable annotations say nothing either way
        return
    declared = {kind for hint in hints.values() for kind in _kinds(hint)}
    other = _CONCURRENT_TYPES if orderly else _ORDERLY_TYPES
    if declared & other:
        raise ListenerKindError(_kind_message(listener, orderly))


def _kinds(hint: object) -> set[object]:
    """``hint`` and the types inside it (``ConsumeOrderlyStatus | None`` gives both)."""
    return {hint, *(k for arg in typing.get_args(hint) for k in _kinds(arg))}


def _kind_message(listener: object, orderly: bool) -> str:
    if orderly:
        return (
            f"{listener!r} is a MessageListenerOrderly but answers with "
            "ConsumeConcurrentlyStatus: return ConsumeOrderlyStatus, or do not subclass "
            "MessageListenerOrderly to consume concurrently"
        )
    return (
        f"{listener!r} answers with ConsumeOrderlyStatus but is not a "
        "MessageListenerOrderly, so the consumer would run it concurrently: subclass "
        "MessageListenerOrderly to consume in order, or return ConsumeConcurrentlyStatus"
    )


def invoke(
    fn: ListenerFn, group: str, msgs: list[MessageExt], context: ConsumeConcurrentlyContext
) -> tuple[ConsumeConcurrentlyStatus, bool]:
    """Call the listener; None, a foreign value or an exception count as RECONSUME_LATER.

    Returns the status and whether the listener raised (traced as EXCEPTION, RocketMQ's
    ``ConsumeReturnType``). The listener's exception is logged with group, topic,
    partition and message ids, never raised.

    Raises:
        ListenerKindError: the listener answered with a ``ConsumeOrderlyStatus``.
    """
    try:
        status = fn(msgs, context)
        if status is _SUCCESS:  # the common answer: a shared result, nothing allocated
            return _SUCCEEDED
    except Exception as exc:
        return listener_raised(group, msgs, context, exc)
    return answered(fn, group, msgs, context, status)


def listener_raised(
    group: str, msgs: list[MessageExt], context: ConsumeConcurrentlyContext, exc: Exception
) -> tuple[ConsumeConcurrentlyStatus, bool]:
    """:func:`invoke`'s answer when the listener raised ``exc``: logged, RECONSUME_LATER."""
    _log.error(
        "listener raised; RECONSUME_LATER (group=%s, topic=%s, partition=%s, msg_ids=%s)",
        group,
        context.message_queue.topic,
        context.message_queue.queue_id,
        _ids(msgs),
        exc_info=exc,
    )
    return Status.RECONSUME_LATER, True


def answered(
    fn: ListenerFn,
    group: str,
    msgs: list[MessageExt],
    context: ConsumeConcurrentlyContext,
    status: object,
) -> tuple[ConsumeConcurrentlyStatus, bool]:
    """:func:`invoke`'s answer when the listener returned ``status`` (CONSUME_SUCCESS, the
    common answer, is taken before this is called).

    Raises:
        ListenerKindError: the listener answered with a ``ConsumeOrderlyStatus``.
    """
    if isinstance(status, ConsumeConcurrentlyStatus):
        return status, False
    if isinstance(status, ConsumeOrderlyStatus):
        raise ListenerKindError(_kind_message(fn, orderly=False))
    _log.warning(
        "listener returned %r; RECONSUME_LATER (group=%s, topic=%s, partition=%s, msg_ids=%s)",
        status,
        group,
        context.message_queue.topic,
        context.message_queue.queue_id,
        _ids(msgs),
    )
    return Status.RECONSUME_LATER, False


def refuse_concurrent_status(fn: object, result: object) -> None:
    """An orderly listener's answer must not be a ``ConsumeConcurrentlyStatus``.

    Raises:
        ListenerKindError: it is.
    """
    if isinstance(result, ConsumeConcurrentlyStatus):
        raise ListenerKindError(_kind_message(fn, orderly=True))


_ORDERLY_TYPES: frozenset[object] = frozenset({ConsumeOrderlyStatus, ConsumeOrderlyContext})
_CONCURRENT_TYPES: frozenset[object] = frozenset(
    {ConsumeConcurrentlyStatus, ConsumeConcurrentlyContext}
)


def _ids(msgs: Sequence[MessageExt]) -> str:
    return ",".join(m.msg_id for m in msgs)
