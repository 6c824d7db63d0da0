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


def decode_record(record: KafkaRecord) -> MessageExt:
    """Build the :class:`MessageExt` a listener sees from a consumed record.

    The topic is the logical name of the record's topic; the retry-topic reset of
    RocketMQ is done by the consumer, which knows its group.

    Raises:
        MalformedHeaderError: headers cannot be decoded as properties.
        InvalidNameError: the record's topic is not a name rmqcompat produces.
    """
    physical = record.topic() or ""
    partition = record.partition() or 0
    offset = record.offset() or 0
    properties = props.from_headers(record.headers())
    _, logical = from_kafka_topic(physical)
    store_timestamp = record.timestamp()[1]
    return MessageExt(
        topic=logical,
        body=record.value() or b"",
        msg_id=properties.get(props.UNIQ_KEY) or offset_message_id(physical, partition, offset),
        queue_id=partition,
        queue_offset=offset,
        born_timestamp=props.decode_int(properties, props.BORN_TIMESTAMP, store_timestamp),
        store_timestamp=store_timestamp,
        reconsume_times=props.decode_int(properties, props.RECONSUME_TIME, 0),
        properties=properties,
        key=record.key(),
    )
