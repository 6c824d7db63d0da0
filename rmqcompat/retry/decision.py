"""Where a failed message goes next: RocketMQ's rules for every consume mode, as one pure
function (:func:`route_failed`), called by every path that settles a failure.

- Concurrent, CLUSTERING (the broker's ``consumerSendMsgBack``): dead-letter when the
  message already failed ``max_reconsume_times`` times or the requested level is
  negative; otherwise park it on level ``3 + reconsume_times`` (or the requested level),
  capped at the highest level, bound for ``%RETRY%<group>``.
- Concurrent, BROADCASTING (``processConsumeResult``): dropped at its first failure.
- Orderly, either model (``checkReconsumeTimes``): consumed again in place after the
  suspension, until it already failed ``max_reconsume_times`` times; then dead-lettered
  (BROADCASTING too: RocketMQ's orderly ``sendMessageBack`` does not look at the model).
  A requested delay level means nothing to orderly consumption.
- Dead-lettering switched off (``dead_letter=False``, rmqcompat's own setting): what would
  go to the DLQ is discarded.

The new message keeps the body, flag, tags, keys, born time and properties, counts one
more reconsume and records the original topic and message id.

Routing is total: any reconsume count and any requested level give a destination on the
table (a count below zero is read as zero, see :func:`properties.clamp_reconsume_times`),
so no message can make the send-back path raise.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import lru_cache

from rmqcompat import properties as props
from rmqcompat.message import MessageExt
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.naming import dlq_topic, retry_topic

#: RocketMQ's first retry waits level 3; retry n waits level ``3 + (n - 1)``.
FIRST_RETRY_LEVEL = 3
#: A requested delay level below zero dead-letters at once (``delay_level_when_next_consume``).
DLQ_NOW = -1
#: RocketMQ's ``cleanExpireMsg`` sends a message back on this level when its consume timed out.
CONSUME_TIMEOUT_LEVEL = 3
#: RocketMQ's default ``maxReconsumeTimes`` for concurrent consumers.
DEFAULT_MAX_RECONSUME_TIMES = 16
#: A configured ``max_reconsume_times`` of -1 means the default (RocketMQ's
#: ``DefaultMQPushConsumerImpl.getMaxReconsumeTimes``).
USE_DEFAULT_MAX = -1


def max_reconsume_times_of(configured: int) -> int:
    """The limit in force for a configured ``max_reconsume_times`` (-1: the default)."""
    return DEFAULT_MAX_RECONSUME_TIMES if configured == USE_DEFAULT_MAX else configured


class DestinationKind(enum.Enum):
    #: parked on a delay level, bound for ``%RETRY%<group>`` (concurrent, CLUSTERING)
    DELAY = "delay"
    #: produced to ``%DLQ%<group>``
    DLQ = "dlq"
    #: gone, with a reason: BROADCASTING's drop, or dead-lettering switched off
    DISCARD = "discard"
    #: consumed again in place after the suspension (orderly)
    SUSPEND = "suspend"


#: Why a BROADCASTING concurrent consumer drops a failed message (RocketMQ logs the same).
BROADCASTING_DROP = "BROADCASTING"
#: Why a message bound for the DLQ is discarded instead.
DEAD_LETTER_OFF = "dead_letter is off"


@dataclass(frozen=True)
class Destination:
    """The next stop of a failed message: a delay level bound for ``real_topic``, the DLQ
    (``real_topic``), in place again (SUSPEND) or nowhere (DISCARD, ``reason`` says why)."""

    kind: DestinationKind
    real_topic: str
    level: int = 0
    reason: str = ""


@dataclass(frozen=True)
class RetryPolicy:
    """Per-group retry settings (RocketMQ defaults) and the consume mode they apply to:
    ``orderly`` (a :class:`MessageListenerOrderly`) and ``broadcasting`` (the message
    model)."""

    group: str
    levels: DelayLevels
    max_reconsume_times: int = DEFAULT_MAX_RECONSUME_TIMES
    dead_letter: bool = True
    orderly: bool = False
    broadcasting: bool = False
    #: RocketMQ 5's consumption by receipt handle (the ``rmqcompat.v5`` consumers): see
    #: :func:`dead_letter_properties`
    receipt_handles: bool = False

    def __post_init__(self) -> None:
        if self.max_reconsume_times < 0:
            raise ValueError("max_reconsume_times must be >= 0")


def route_failed(policy: RetryPolicy, reconsume_times: int, delay_level: int = 0) -> Destination:
    """Decide where a message that failed ``reconsume_times`` times before now goes.

    ``reconsume_times`` is the stored count (the broker's), not a local re-consume's +1;
    ``delay_level`` is the concurrent listener's ``delay_level_when_next_consume`` (or the
    consume timeout's level).
    """
    group = policy.group
    if policy.broadcasting and not policy.orderly:
        return _destination(DestinationKind.DISCARD, group, reason=BROADCASTING_DROP)
    reconsume_times = props.clamp_reconsume_times(reconsume_times)
    exhausted = reconsume_times >= policy.max_reconsume_times
    if exhausted or (delay_level <= DLQ_NOW and not policy.orderly):
        if not policy.dead_letter:
            return _destination(DestinationKind.DISCARD, group, reason=DEAD_LETTER_OFF)
        return _destination(DestinationKind.DLQ, group)
    if policy.orderly:
        return _destination(DestinationKind.SUSPEND, group)
    level = delay_level if delay_level > 0 else retry_level(policy.levels, reconsume_times)
    level = min(level, policy.levels.max_level)
    return _destination(DestinationKind.DELAY, group, level)


@lru_cache(maxsize=4096)
def _destination(
    kind: DestinationKind, group: str, level: int = 0, reason: str = ""
) -> Destination:
    """A group has a few destinations (its DLQ, a retry per level): each is made once, not
    per failed message (a frozen dataclass and a name check cost more than the lookup)."""
    topic = retry_topic(group) if kind in _RETRY_BOUND else dlq_topic(group)
    return Destination(kind, topic, level, reason)


#: Kinds whose message stays with the group's retry topic (parked, or in place).
_RETRY_BOUND = frozenset({DestinationKind.DELAY, DestinationKind.SUSPEND})


def retry_level(levels: DelayLevels, reconsume_times: int) -> int:
    """RocketMQ's level for a message that already failed ``reconsume_times`` times:
    ``3 + reconsume_times``, capped at the highest level of the table."""
    return min(FIRST_RETRY_LEVEL + reconsume_times, levels.max_level)


#: The ``DELAY`` a dead letter carries, as Apache RocketMQ 5.5.0 stores it: 0 from a
#: concurrent consumer's send-back, -1 from an orderly one (the broker's redirect of a
#: retry past its limit).
DEAD_LETTER_DELAY = {False: "0", True: "-1"}


def dead_letter_properties(
    message: MessageExt,
    policy: RetryPolicy,
    original_topic: str,
    reconsume_times: int | None = None,
) -> dict[str, str]:
    """Properties of the dead letter of ``message``: :func:`sendback_properties`, plus
    what RocketMQ's dead letters carry besides: ``DELAY`` (:data:`DEAD_LETTER_DELAY`),
    the ``REAL_TOPIC`` / ``REAL_QID`` of a message delivered from a delay level (its
    retry topic), and for orderly consumers ``MAX_RECONSUME_TIMES`` (their
    ``sendMessageBack`` writes it).

    With ``policy.receipt_handles`` (RocketMQ 5), a message without a message group
    counts one reconsume more: RocketMQ 5.5.0's revive writes its last failure back once
    more before the broker dead-letters it, so a 5.x reader of ``%DLQ%<group>`` sees
    ``delivery_attempt`` max attempts + 2 (tests/conformance, ``v5_*_attempts_to_dlq``);
    a FIFO message is dead-lettered by the client, without that revive.
    """
    if policy.receipt_handles and props.SHARDING_KEY not in message.properties:
        stored = message.reconsume_times if reconsume_times is None else reconsume_times
        reconsume_times = stored + 1
    out = sendback_properties(message, original_topic, reconsume_times)
    for kept in (props.REAL_TOPIC, props.REAL_QID):
        if kept in message.properties:
            out[kept] = message.properties[kept]
    out[props.DELAY] = DEAD_LETTER_DELAY[policy.orderly]
    if policy.orderly:
        out[props.MAX_RECONSUME_TIMES] = props.encode_int(policy.max_reconsume_times)
    return out


def sendback_properties(
    message: MessageExt,
    original_topic: str,
    reconsume_times: int | None = None,
) -> dict[str, str]:
    """Properties of the message that replaces ``message`` after it failed.

    ``original_topic`` is the logical topic the listener saw (already reset from the
    retry topic); RETRY_TOPIC and ORIGIN_MESSAGE_ID keep their first value.
    ``reconsume_times`` is the stored count (see :func:`route_failed`; default: the
    message's); the new message counts one more. Properties of the delivery itself
    (``CONSUME_START_TIME``) and of parking do not travel: the broker copies the stored
    message, which has neither.
    """
    out = dict(message.properties)
    out.setdefault(props.RETRY_TOPIC, original_topic)
    out.setdefault(props.ORIGIN_MESSAGE_ID, message.msg_id)
    out.setdefault(props.UNIQ_KEY, message.msg_id)
    out.setdefault(props.BORN_TIMESTAMP, props.encode_int(message.born_timestamp))
    stored = message.reconsume_times if reconsume_times is None else reconsume_times
    out[props.RECONSUME_TIME] = props.encode_int(props.clamp_reconsume_times(stored) + 1)
    # RocketMQ passes the limit in the send-back's request header, never as a property of
    # the stored message; one an earlier rmqcompat wrote is not carried on
    out.pop(props.MAX_RECONSUME_TIMES, None)
    for transient in props.TRANSIENT:
        out.pop(transient, None)
    return out
