"""How a message sits in a Kafka record: value = body, key = sharding key, headers = properties.

Records written by plain Kafka producers (no headers) are readable too: the message id
then falls back to an offset-based id and the born time to the record timestamp.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from rmqcompat import properties as props
from rmqcompat.message import MessageExt
from rmqcompat.topics.naming import from_kafka_topic


class KafkaRecord(Protocol):
    """The part of ``confluent_kafka.Message`` that decoding reads."""

    def topic(self) -> str | None: ...
    def partition(self) -> int | None: ...
    def offset(self) -> int | None: ...
    def key(self) -> bytes | None: ...
    def value(self) -> bytes | None: ...
    def headers(self) -> list[tuple[str, bytes | None]] | None: ...
    def timestamp(self) -> tuple[int, int]: ...


@dataclass(frozen=True)
class OutgoingRecord:
    """A record ready for ``Producer.produce``."""

    topic: str
    value: bytes
    key: bytes | None
    headers: list[tuple[str, bytes | None]]
    partition: int | None = None


def offset_message_id(physical_topic: str, partition: int, offset: int) -> str:
    """RocketMQ's ``offsetMsgId`` counterpart: where the record is stored, as text."""
    return f"{physical_topic}@{partition}@{offset}"


def decode_properties(headers: list[tuple[str, bytes | None]] | None) -> dict[str, str]:
    """:func:`properties.from_headers`, with a fast path for well-formed headers.

    Consumers decode every record, so the common case is one plain loop; anything unusual
    (a None value, bad UTF-8, a repeated name) goes through the validating codec, which
    raises the same :class:`MalformedHeaderError` as always.
    """
    if not headers:
        return {}
    properties: dict[str, str] = {}
    try:
        for name, value in headers:
            properties[name] = value.decode("utf-8")  # type: ignore[union-attr]
    except (AttributeError, UnicodeDecodeError):
        return props.from_headers(headers)
    if len(properties) != len(headers):  # a repeated name
        return props.from_headers(headers)
    return properties


@dataclass(frozen=True)
class TopicDecoder:
    """Decodes the records of one physical topic; its logical name is resolved once.

    Raises (from :meth:`of`):
        InvalidNameError: the topic is not a name rmqcompat produces.
    """

    physical: str
    logical: str

    @classmethod
    def of(cls, physical: str) -> TopicDecoder:
        return cls(physical, from_kafka_topic(physical)[1])

    def decode(self, record: KafkaRecord, partition: int, offset: int) -> MessageExt:
        """The :class:`MessageExt` of ``record`` (read at ``partition`` / ``offset``).

        Raises:
            MalformedHeaderError: headers cannot be decoded as properties.
        """
        properties = decode_properties(record.headers())
        store_timestamp = record.timestamp()[1]
        get = properties.get
        born = store_timestamp
        if get(props.BORN_TIMESTAMP) is not None:
            born = props.decode_int(properties, props.BORN_TIMESTAMP)
        reconsume = 0
        if get(props.RECONSUME_TIME) is not None:
            reconsume = props.decode_int(properties, props.RECONSUME_TIME)
        # positional: about a third cheaper than keywords, and this runs for every record
        # (field order is pinned by tests/unit/test_wire.py, which checks every field)
        return MessageExt(
            self.logical,
            record.value() or b"",
            get(props.UNIQ_KEY) or offset_message_id(self.physical, partition, offset),
            partition,
            offset,
            born,
            store_timestamp,
            reconsume,
            properties,
            record.key(),
        )


def decode_record(record: KafkaRecord) -> MessageExt:
    """Build the :class:`MessageExt` a listener sees from a consumed record.

    The topic is the logical name of the record's topic; the retry-topic reset of
    RocketMQ is done by the consumer, which knows its group.

    Raises:
        MalformedHeaderError: headers cannot be decoded as properties.
        InvalidNameError: the record's topic is not a name rmqcompat produces.
    """
    decoder = TopicDecoder.of(record.topic() or "")
    return decoder.decode(record, record.partition() or 0, record.offset() or 0)
