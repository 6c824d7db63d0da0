"""Where a failed message goes next: RocketMQ's send-back rules as a pure function.

Mirrors the broker's ``consumerSendMsgBack``: dead-letter when the message already failed
``max_reconsume_times`` times or the requested level is negative; otherwise park it on
level ``3 + reconsume_times`` (or the requested level), capped at the highest level, bound
for ``%RETRY%<group>``. The new message keeps the body, flag, tags, keys, born time and
properties, counts one more reconsume and records the original topic and message id.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from rmqcompat import properties as props
from rmqcompat.message import MessageExt
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.naming import dlq_topic, retry_topic


class DestinationKind(enum.Enum):
    DELAY = "delay"
    DLQ = "dlq"
    DISCARD = "discard"


@dataclass(frozen=True)
class Destination:
    """The next stop of a failed message: a delay level bound for ``real_topic``, or the DLQ."""

    kind: DestinationKind
    real_topic: str
    level: int = 0


@dataclass(frozen=True)
class RetryPolicy:
    """Per-group retry settings (RocketMQ defaults)."""

    group: str
    levels: DelayLevels
    max_reconsume_times: int = 16
    dead_letter: bool = True

    def __post_init__(self) -> None:
        if self.max_reconsume_times < 0:
            raise ValueError("max_reconsume_times must be >= 0")


def route_failed(policy: RetryPolicy, reconsume_times: int, delay_level: int = 0) -> Destination:
    """Decide where a message that failed ``reconsume_times`` times before now goes."""
    if reconsume_times >= policy.max_reconsume_times or delay_level < 0:
        if not policy.dead_letter:
            return Destination(DestinationKind.DISCARD, dlq_topic(policy.group))
        return Destination(DestinationKind.DLQ, dlq_topic(policy.group))
    level = delay_level if delay_level > 0 else policy.levels.retry_level(reconsume_times)
    level = min(level, policy.levels.max_level)
    return Destination(DestinationKind.DELAY, retry_topic(policy.group), level)


def sendback_properties(
    message: MessageExt, policy: RetryPolicy, original_topic: str
) -> dict[str, str]:
    """Properties of the message that replaces ``message`` after it failed.

    ``original_topic`` is the logical topic the listener saw (already reset from the
    retry topic); RETRY_TOPIC and ORIGIN_MESSAGE_ID keep their first value.
    """
    out = dict(message.properties)
    out.setdefault(props.RETRY_TOPIC, original_topic)
    out.setdefault(props.ORIGIN_MESSAGE_ID, message.msg_id)
    out.setdefault(props.UNIQ_KEY, message.msg_id)
    out.setdefault(props.BORN_TIMESTAMP, props.encode_int(message.born_timestamp))
    out[props.RECONSUME_TIME] = props.encode_int(message.reconsume_times + 1)
    out[props.MAX_RECONSUME_TIMES] = props.encode_int(policy.max_reconsume_times)
    for transient in (
        props.DUE_TIME,
        props.DELAY,
        props.REAL_TOPIC,
        props.REAL_QID,
        props.TIMER_DELIVER_MS,
    ):
        out.pop(transient, None)
    return out
