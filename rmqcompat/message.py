"""Message types: :class:`Message` (sent by apps) and :class:`MessageExt` (received)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from rmqcompat import properties as props
from rmqcompat.errors import InvalidMessageError, MessageTooLargeError
from rmqcompat.topics.naming import validate_topic

#: RocketMQ's default ``maxMessageSize``.
DEFAULT_MAX_MESSAGE_SIZE = 4 * 1024 * 1024

#: Room above the largest body for the key, headers and record/batch framing. Every size
#: limit derived from ``max_message_size`` adds it, so they all agree (see below).
RECORD_HEADROOM = 64 * 1024

#: Apache Kafka's default broker ``message.max.bytes`` (1 MiB + 12 bytes of log overhead).
KAFKA_DEFAULT_MAX_MESSAGE_BYTES = 1_048_588


def max_record_bytes(max_message_size: int) -> int:
    """The largest record for bodies up to ``max_message_size``, never below Kafka's default.

    The one value for every limit on such a record: producers' ``message.max.bytes`` (the
    app's producer, the consumer's send-back producer, the forwarder) and the topic config
    ``max.message.bytes`` of every topic rmqcompat creates. Were any of them smaller, a
    body the producer accepts would be refused one hop later (retry, delay level, DLQ).
    """
    return max(KAFKA_DEFAULT_MAX_MESSAGE_BYTES, max_message_size + RECORD_HEADROOM)


#: Properties that rmqcompat manages itself; they cannot be set as user properties.
SYSTEM_PROPERTIES = frozenset(
    {
        props.KEYS,
        props.TAGS,
        props.DELAY,
        props.RETRY_TOPIC,
        props.REAL_TOPIC,
        props.REAL_QID,
        props.ORIGIN_MESSAGE_ID,
        props.RECONSUME_TIME,
        props.MAX_RECONSUME_TIMES,
        props.UNIQ_KEY,
        props.CONSUME_START_TIME,
        props.TRAN_MSG,
        props.PGROUP,
        props.TIMER_DELIVER_MS,
        props.TIMER_ENQUEUE_MS,
        props.TIMER_DEQUEUE_MS,
        props.TIMER_OUT_MS,
        props.FLAG,
        props.BORN_TIMESTAMP,
        props.DUE_TIME,
        props.QUARANTINE_REASON,
        props.REPLAY_ID,
        props.REPLAY_TIME,
    }
)


# Topic names already validated: apps send to a few topics over and over, and the regex
# check was a measurable part of building each message. Bounded against unbounded names.
_valid_topics: set[str] = set()
_VALID_TOPICS_MAX = 4096


def _validate_topic(topic: str) -> None:
    if topic in _valid_topics:
        return
    validate_topic(topic)
    if len(_valid_topics) >= _VALID_TOPICS_MAX:
        _valid_topics.clear()
    _valid_topics.add(topic)


def check_user_property(name: object, value: object) -> None:
    """Refuse a user property that cannot be sent: not str to str, an empty name, or a
    name reserved for rmqcompat's own properties (the message's fields carry those).

    Raises:
        InvalidMessageError: naming the property.
    """
    if not isinstance(name, str) or not isinstance(value, str):
        raise InvalidMessageError(
            f"Message.properties must map str to str, not {name!r}: {type(value).__name__}"
        )
    if name in SYSTEM_PROPERTIES:
        raise InvalidMessageError(f"property {name!r} is reserved; use the Message field instead")
    if not name:
        raise InvalidMessageError("property names must not be empty")


def _check_type(name: str, value: object, expected: type | tuple[type, ...], wanted: str) -> None:
    # bool is an int to Python, never a flag, level or time to RocketMQ.
    if not isinstance(value, expected) or isinstance(value, bool):
        raise InvalidMessageError(f"Message.{name} must be {wanted}, not {type(value).__name__}")


def _keys_text(keys: object) -> str:
    if isinstance(keys, str):
        return keys
    if isinstance(keys, bytes | bytearray) or not isinstance(keys, Iterable):
        raise InvalidMessageError(f"Message.keys must be str or strs, not {type(keys).__name__}")
    keys = list(keys)
    for key in keys:
        _check_type("keys", key, str, "str or strs")
    return props.join_keys(keys) or ""


@dataclass
class Message:
    """A message to send.

    Args:
        topic: logical RocketMQ topic name (mapped to a Kafka name by the producer).
        body: bytes, or text sent as UTF-8.
        tags: one tag, used by subscription expressions such as ``"A || B"``.
        keys: one key or several (stored space-separated, as RocketMQ does).
        flag: an application-defined integer carried unchanged.
        properties: user properties (names of rmqcompat's own properties are refused).
        delay_time_level: RocketMQ scheduled message: deliver after this level's delay.
        deliver_time_ms: RocketMQ 5 timer message: deliver at this epoch time (ms); at
            most the producer's ``timer_max_delay_sec`` ahead (checked when sent).

    Raises:
        InvalidNameError: ``topic`` breaks RocketMQ's naming rule.
        InvalidMessageError: a field has the wrong type, or a property name is reserved.
    """

    topic: str
    body: bytes | str = b""
    tags: str | None = None
    keys: str | Iterable[str] | None = None
    flag: int = 0
    properties: dict[str, str] = field(default_factory=dict)
    delay_time_level: int = 0
    deliver_time_ms: int | None = None

    def __post_init__(self) -> None:
        # Most messages (a topic seen before, a bytes body, no keys, properties, delay or
        # timer) pass every check below: one test instead of ten calls, per message sent.
        if (
            type(self.topic) is str
            and self.topic in _valid_topics
            and type(self.body) is bytes
            and (self.tags is None or type(self.tags) is str)
            and self.keys is None
            and type(self.flag) is int
            and type(self.properties) is dict
            and not self.properties
            and type(self.delay_time_level) is int
            and self.deliver_time_ms is None
        ):
            return
        _check_type("topic", self.topic, str, "str")
        _validate_topic(self.topic)
        _check_type("body", self.body, (bytes, str), "bytes or str")
        if isinstance(self.body, str):
            self.body = self.body.encode("utf-8")
        if self.tags is not None:
            _check_type("tags", self.tags, str, "str or None")
        if self.keys is not None:
            self.keys = _keys_text(self.keys)
        _check_type("flag", self.flag, int, "int")
        _check_type("properties", self.properties, dict, "a dict of str to str")
        _check_type("delay_time_level", self.delay_time_level, int, "int")
        if self.deliver_time_ms is not None:
            _check_type("deliver_time_ms", self.deliver_time_ms, int, "int (epoch ms) or None")
        for name, value in self.properties.items():
            self._check_user_property(name, value)

    @staticmethod
    def _check_user_property(name: object, value: object) -> None:
        check_user_property(name, value)

    def put_user_property(self, name: str, value: str) -> None:
        self._check_user_property(name, value)
        self.properties[name] = value

    def body_bytes(self) -> bytes:
        return self.body if isinstance(self.body, bytes) else self.body.encode("utf-8")

    def check_size(self, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        """Raise :class:`MessageTooLargeError` if the body exceeds ``max_message_size``."""
        size = len(self.body_bytes())
        if size > max_message_size:
            raise MessageTooLargeError(
                f"message body is {size} bytes; the maximum is {max_message_size} "
                f"(max_message_size) for topic {self.topic}"
            )

    def system_properties(self) -> dict[str, str]:
        """Every property this message carries on the wire, user properties included."""
        out = dict(self.properties)
        if self.tags:
            out[props.TAGS] = self.tags
        if self.keys:
            out[props.KEYS] = str(self.keys)
        if self.flag:
            out[props.FLAG] = props.encode_int(self.flag)
        return out


@dataclass(slots=True, weakref_slot=True)
class MessageExt:
    """A received message, with where it came from and how often it failed before.

    ``topic`` is the logical topic; for a message redelivered from ``%RETRY%<group>`` it is
    the original topic again (RocketMQ's ``RETRY_TOPIC`` reset). ``queue_id`` is the Kafka
    partition and ``queue_offset`` the Kafka offset of the record that carried it.

    Slotted: one is built for every message consumed, and the compiled core sets its
    slots without running ``__init__`` (``native/src/message_ext.rs``).
    """

    topic: str
    body: bytes
    msg_id: str
    queue_id: int
    queue_offset: int
    born_timestamp: int
    store_timestamp: int
    reconsume_times: int = 0
    properties: dict[str, str] = field(default_factory=dict)
    key: bytes | None = None

    @property
    def tags(self) -> str | None:
        return self.properties.get(props.TAGS)

    @property
    def keys(self) -> str | None:
        return self.properties.get(props.KEYS)

    @property
    def flag(self) -> int:
        return props.decode_int(self.properties, props.FLAG, 0)

    def get_property(self, name: str) -> str | None:
        return self.properties.get(name)

    def user_properties(self) -> dict[str, str]:
        return {k: v for k, v in self.properties.items() if k not in SYSTEM_PROPERTIES}

    def to_message(self) -> Message:
        """A new :class:`Message` with this one's body, tags, keys, flag and user properties."""
        return Message(
            topic=self.topic,
            body=self.body,
            tags=self.tags,
            keys=self.keys,
            flag=self.flag,
            properties=self.user_properties(),
        )


#: The broker name of every :class:`MessageQueue`: one Kafka cluster is one "broker".
BROKER_NAME = "kafka"


@dataclass(frozen=True)
class MessageQueue:
    """A RocketMQ message queue: on Kafka, one partition of a topic (logical name)."""

    topic: str
    queue_id: int
    broker_name: str = BROKER_NAME
