"""The 5.x ``Message``: property-style fields, checked as the 5.1.2 client checks them.

Sent messages set ``topic``, ``body``, ``tag``, ``keys`` (each assignment adds one key),
``message_group`` (FIFO), ``delivery_timestamp`` (DELAY) and ``add_property``. The
exclusions of upstream's setters hold: a message group and a delivery timestamp never
go together. Received messages also carry ``message_id``, ``delivery_attempt`` (1 on the
first delivery), ``born_timestamp`` (ms), ``receipt_handle`` and ``message_type``.

On Kafka the message group is the record key (one group, one partition, in order) and
travels as RocketMQ's ``__SHARDINGKEY`` property; the delivery time is the timer
property the forwarder honours, and its value stays readable after delivery in
``__STARTDELIVERTIME`` so a received message knows it was a DELAY message.
"""

from __future__ import annotations

import enum

from rmqcompat import properties as props
from rmqcompat.message import MessageExt
from rmqcompat.topics.naming import validate_topic
from rmqcompat.v5.exceptions import UNSUPPORTED, IllegalArgumentException, UnsupportedException

MESSAGE_GROUP = props.SHARDING_KEY
DELIVERY_TIMESTAMP = "__STARTDELIVERTIME"
#: Properties of the 5.x layer, never shown as user properties. The message group is not
#: one: RocketMQ 5.5.0's proxy shows ``__SHARDINGKEY`` among a FIFO message's properties
#: (tests/conformance, v5_fifo_*), and so does rmqcompat.
INTERNAL = frozenset({DELIVERY_TIMESTAMP})

#: A ``delivery_timestamp`` above this is read as epoch milliseconds (it would be the
#: year 5138 in seconds); below, as epoch seconds, the unit the 5.1.2 client sends.
_MS_THRESHOLD = 100_000_000_000


class MessageType(enum.IntEnum):
    """``apache.rocketmq.v2.MessageType`` codes, as ``Message.message_type`` holds them."""

    NORMAL = 1
    FIFO = 2
    DELAY = 3
    TRANSACTION = 4


def _not_blank(value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise IllegalArgumentException(f"{what} should not be blank.")
    return value


class Message:
    """A message to send, or one received (see the module docstring)."""

    def __init__(self) -> None:
        self._topic: str | None = None
        self._body: bytes | None = None
        self._tag: str | None = None
        self._keys: set[str] = set()
        self._message_group: str | None = None
        self._delivery_timestamp: int | None = None
        self._properties: dict[str, str] = {}
        self.message_id: str | None = None
        self.message_type: int | None = None
        self.receipt_handle: str | None = None
        self._delivery_attempt: int | None = None
        self._born_timestamp: int | None = None
        self._store_timestamp: int | None = None
        self._namespace = ""

    def __str__(self) -> str:
        return (
            f"topic:{self._topic}, tag:{self._tag}, message_group:{self._message_group}, "
            f"delivery_timestamp:{self._delivery_timestamp}, keys:{self._keys}, "
            f"properties:{self._properties}"
        )

    @property
    def topic(self) -> str | None:
        return self._topic

    @topic.setter
    def topic(self, topic: str) -> None:
        if not isinstance(topic, str) or not topic.strip():
            raise IllegalArgumentException("topic has not been set yet.")
        try:
            validate_topic(topic)
        except ValueError as exc:
            raise IllegalArgumentException(str(exc)) from exc
        self._topic = topic

    @property
    def body(self) -> bytes | None:
        return self._body

    @body.setter
    def body(self, body: bytes | str) -> None:
        if isinstance(body, str):
            body = body.encode("utf-8")
        if not isinstance(body, bytes | bytearray) or not body:
            raise IllegalArgumentException("body should not be blank.")
        self._body = bytes(body)

    @property
    def tag(self) -> str | None:
        return self._tag

    @tag.setter
    def tag(self, tag: str) -> None:
        _not_blank(tag, "tag")
        if "|" in tag:
            raise IllegalArgumentException('tag should not contain "|".')
        self._tag = tag

    @property
    def keys(self) -> set[str]:
        return self._keys

    @keys.setter
    def keys(self, key: str) -> None:
        # upstream's setter adds: ``msg.keys = "a"; msg.keys = "b"`` gives {"a", "b"}
        self._keys.add(_not_blank(key, "key"))

    @property
    def message_group(self) -> str | None:
        return self._message_group

    @message_group.setter
    def message_group(self, message_group: str) -> None:
        _not_blank(message_group, "message_group")
        if self._delivery_timestamp:
            raise IllegalArgumentException(
                "message_group and delivery_timestamp should not be set at same time."
            )
        self._message_group = message_group

    @property
    def delivery_timestamp(self) -> int | None:
        return self._delivery_timestamp

    @delivery_timestamp.setter
    def delivery_timestamp(self, delivery_timestamp: int) -> None:
        if not isinstance(delivery_timestamp, int) or isinstance(delivery_timestamp, bool):
            raise IllegalArgumentException("delivery_timestamp must be an int (epoch seconds)")
        if self._message_group:
            raise IllegalArgumentException(
                "delivery_timestamp and message_group should not be set at same time."
            )
        self._delivery_timestamp = delivery_timestamp

    @property
    def properties(self) -> dict[str, str]:
        return self._properties

    @property
    def priority(self) -> int | None:
        return None

    @priority.setter
    def priority(self, priority: int) -> None:
        raise UnsupportedException("priority messages are not supported by rmqcompat", UNSUPPORTED)

    @property
    def lite_topic(self) -> str | None:
        return None

    @lite_topic.setter
    def lite_topic(self, lite_topic: str) -> None:
        raise UnsupportedException("lite topics are not supported by rmqcompat", UNSUPPORTED)

    def add_property(self, key: str, value: str) -> None:
        """Add a user property. Raises IllegalArgumentException: a blank key or value."""
        _not_blank(key, "key")
        _not_blank(value, "value")
        self._properties[key] = value

    @property
    def namespace(self) -> str:
        return self._namespace

    @property
    def delivery_attempt(self) -> int | None:
        return self._delivery_attempt

    @property
    def born_timestamp(self) -> int | None:
        return self._born_timestamp

    @property
    def store_timestamp(self) -> int | None:
        return self._store_timestamp

    @property
    def corrupted(self) -> bool:
        """Kafka checks every record's CRC: a received body is never corrupt."""
        return False

    def delivery_time_ms(self) -> int | None:
        """``delivery_timestamp`` in epoch ms (it is given in seconds, or in ms)."""
        ts = self._delivery_timestamp
        if not ts:
            return None
        return ts if ts > _MS_THRESHOLD else ts * 1000

    @classmethod
    def received(cls, ext: MessageExt, namespace: str, receipt_handle: str | None) -> Message:
        """A received message built from the core's :class:`MessageExt`."""
        msg = cls()
        p = ext.properties
        msg._topic, msg._body, msg._namespace = ext.topic, ext.body, namespace
        msg._tag = p.get(props.TAGS)
        msg._keys = set((p.get(props.KEYS) or "").split(props.KEY_SEPARATOR)) - {""}
        msg._message_group = p.get(MESSAGE_GROUP)
        delivery = p.get(DELIVERY_TIMESTAMP)
        msg._delivery_timestamp = int(delivery) if delivery else None
        msg._properties = {k: v for k, v in ext.user_properties().items() if k not in INTERNAL}
        msg.message_id = ext.msg_id
        msg.message_type = int(_received_type(p))
        msg.receipt_handle = receipt_handle
        msg._delivery_attempt = ext.reconsume_times + 1
        msg._born_timestamp = ext.born_timestamp
        msg._store_timestamp = ext.store_timestamp
        return msg


def _received_type(p: dict[str, str]) -> MessageType:
    if p.get(props.TRAN_MSG) == "true":
        return MessageType.TRANSACTION
    if MESSAGE_GROUP in p:
        return MessageType.FIFO
    if DELIVERY_TIMESTAMP in p:
        return MessageType.DELAY
    return MessageType.NORMAL


def send_type(message: Message, transactional: bool) -> MessageType:
    """The type a message is sent as, decided from its fields as upstream decides it.

    Raises:
        IllegalArgumentException: a transactional message with a group or delivery time.
    """
    if transactional:
        if message.message_group or message.delivery_timestamp:
            raise IllegalArgumentException(
                "transactional message should not set message_group, delivery_timestamp, "
                "lite_topic and priority"
            )
        return MessageType.TRANSACTION
    if message.message_group:
        return MessageType.FIFO
    if message.delivery_timestamp:
        return MessageType.DELAY
    return MessageType.NORMAL
