"""A 5.x :class:`~rmqcompat.v5.message.Message` as the core's message, checked first.

Every check runs before any I/O and raises upstream's exception with upstream's text:
topic and body set, body at most the producer's maximum (4 MiB), the message type's
exclusions. The type decides the Kafka side: FIFO -> the message group is the record
key, DELAY -> a timer message the forwarder delivers at ``delivery_timestamp``.
"""

from __future__ import annotations

from dataclasses import dataclass

from rmqcompat.errors import RmqCompatError
from rmqcompat.message import DEFAULT_MAX_MESSAGE_SIZE
from rmqcompat.message import Message as CoreMessage
from rmqcompat.v5.exceptions import IllegalArgumentException
from rmqcompat.v5.message import DELIVERY_TIMESTAMP, MESSAGE_GROUP, Message, send_type


@dataclass(frozen=True)
class Outgoing:
    """A checked message: the core message, its type and its sharding key (or None)."""

    core: CoreMessage
    message_type: int
    sharding_key: str | None


def outgoing(
    message: Message, transactional: bool = False, max_body: int = DEFAULT_MAX_MESSAGE_SIZE
) -> Outgoing:
    """Check ``message`` and build the core message.

    Raises:
        IllegalArgumentException: not a Message, no topic, empty or too large a body, or
            a transactional message with a group or delivery time.
    """
    if not isinstance(message, Message):
        raise IllegalArgumentException(f"message must be a Message, not {type(message).__name__}")
    if not message.topic:
        raise IllegalArgumentException("topic has not been set yet.")
    if not message.body:
        raise IllegalArgumentException("message body is none.")
    if len(message.body) > max_body:
        raise IllegalArgumentException(
            f"Message body size exceeds the threshold, max size={max_body} bytes"
        )
    kind = send_type(message, transactional)
    properties = dict(message.properties)
    if message.message_group:
        properties[MESSAGE_GROUP] = message.message_group
    deliver_ms = message.delivery_time_ms()
    if deliver_ms is not None:
        properties[DELIVERY_TIMESTAMP] = str(deliver_ms)
    try:
        core = CoreMessage(
            topic=message.topic,
            body=message.body,
            tags=message.tag,
            keys=sorted(message.keys) or None,
            properties=properties,
            deliver_time_ms=deliver_ms,
        )
    except RmqCompatError as exc:  # a reserved property name, say
        raise IllegalArgumentException(str(exc)) from exc
    return Outgoing(core, int(kind), message.message_group)
