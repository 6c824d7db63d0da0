"""The drop-in's ``Message`` (built with setters) and ``ReceivedMessage`` (bytes fields)."""

from __future__ import annotations

from rmqcompat import message as native
from rmqcompat import properties as props
from rmqcompat.consts import MessageProperty
from rmqcompat.errors import InvalidMessageError

Text = str | bytes


def text(name: str, value: object) -> str:
    """Upstream takes ``str`` or UTF-8 ``bytes`` wherever it takes text."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8")
    raise InvalidMessageError(f"{name} must be str or bytes, not {type(value).__name__}")


class Message:
    """A message to send: ``Message(topic)`` then ``set_keys``, ``set_tags``,
    ``set_body``, ``set_property``, ``set_delay_time_level``.

    Setters check types at once (``InvalidMessageError``, a ``TypeError``); names and sizes
    are checked when it is sent, by the send's exception. ``set_property`` of ``KEYS``,
    ``TAGS`` or ``DELAY`` sets that field, as the C client's property map does.
    """

    def __init__(self, topic: Text) -> None:
        self.topic = text("topic", topic)
        self.keys: str | None = None
        self.tags: str | None = None
        self.body = b""
        self.properties: dict[str, str] = {}
        self.delay_time_level = 0

    def set_keys(self, keys: Text) -> None:
        self.keys = text("keys", keys)

    def set_tags(self, tags: Text) -> None:
        self.tags = text("tags", tags)

    def set_body(self, body: Text) -> None:
        self.body = body if isinstance(body, bytes) else text("body", body).encode("utf-8")

    def set_property(self, key: Text, value: Text) -> None:
        name, value = text("property name", key), text("property value", value)
        if name == props.KEYS:
            self.keys = value
        elif name == props.TAGS:
            self.tags = value
        elif name == props.DELAY:
            if not value.isdigit():
                raise InvalidMessageError(f"property DELAY must be a level number, not {value!r}")
            self.delay_time_level = int(value)
        else:  # refused here, not at the send: the property is the mistake
            native.check_user_property(name, value)
            self.properties[name] = value

    def set_delay_time_level(self, delay_time_level: int) -> None:
        if type(delay_time_level) is not int:
            raise InvalidMessageError(
                f"delay_time_level must be int, not {type(delay_time_level).__name__}"
            )
        self.delay_time_level = delay_time_level

    def to_native(self) -> native.Message:
        """The :class:`rmqcompat.Message` to send.

        Raises:
            InvalidNameError / InvalidMessageError: an illegal topic or property name.
        """
        return native.Message(
            self.topic,
            body=self.body,
            tags=self.tags or None,
            keys=self.keys or None,
            properties=dict(self.properties),
            delay_time_level=self.delay_time_level,
        )


def _utf8(value: str | None) -> bytes:
    return (value or "").encode("utf-8")


class ReceivedMessage:
    """A consumed message as upstream shows it: ``topic`` and ``id`` are ``str``; ``tags``,
    ``keys``, ``body`` and properties are ``bytes`` (``b''`` when missing).

    Kafka has no commit log: ``commit_log_offset`` and ``prepared_transaction_offset``
    are 0, ``queue_id`` / ``queue_offset`` are the Kafka partition / offset, and
    ``store_size`` is the record's body, key and headers in bytes.
    """

    def __init__(self, message: native.MessageExt) -> None:
        self._message = message

    @property
    def topic(self) -> str:
        return self._message.topic

    @property
    def tags(self) -> bytes:
        return _utf8(self._message.tags)

    @property
    def keys(self) -> bytes:
        return _utf8(self._message.keys)

    @property
    def body(self) -> bytes:
        return self._message.body

    @property
    def id(self) -> str:
        return self._message.msg_id

    @property
    def delay_time_level(self) -> int:
        return props.decode_int(self._message.properties, props.DELAY, 0)

    @property
    def queue_id(self) -> int:
        return self._message.queue_id

    @property
    def reconsume_times(self) -> int:
        return self._message.reconsume_times

    @property
    def store_size(self) -> int:
        m = self._message
        headers = sum(len(k) + len(v.encode("utf-8")) for k, v in m.properties.items())
        return len(m.body) + len(m.key or b"") + headers

    @property
    def born_timestamp(self) -> int:
        return self._message.born_timestamp

    @property
    def store_timestamp(self) -> int:
        return self._message.store_timestamp

    @property
    def queue_offset(self) -> int:
        return self._message.queue_offset

    @property
    def commit_log_offset(self) -> int:
        return 0

    @property
    def prepared_transaction_offset(self) -> int:
        return 0

    def get_property(self, prop: MessageProperty | Text) -> bytes:
        name = prop.value if isinstance(prop, MessageProperty) else text("property", prop)
        return _utf8(self._message.properties.get(name))

    def __getitem__(self, key: MessageProperty | Text) -> bytes:
        return self.get_property(key)

    def __str__(self) -> str:
        return self.body.decode("utf-8")

    def __bytes__(self) -> bytes:
        return self.body

    def __repr__(self) -> str:
        return f"<ReceivedMessage topic={self.topic!r} id={self.id!r} body={self.body!r}>"
