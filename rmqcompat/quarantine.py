"""Records nobody can process (poison records) are moved aside, never dropped or retried.

The quarantine record keeps the original value, key and raw headers, and adds where it
came from and why it was set aside, so an operator can inspect and repair it.
"""

from __future__ import annotations

from rmqcompat import properties as props
from rmqcompat.topics.naming import QUARANTINE_TOPIC, to_kafka_topic
from rmqcompat.wire import KafkaRecord, OutgoingRecord

SOURCE_TOPIC = "QUARANTINE_SOURCE_TOPIC"
SOURCE_PARTITION = "QUARANTINE_SOURCE_PARTITION"
SOURCE_OFFSET = "QUARANTINE_SOURCE_OFFSET"


def quarantine_record(record: KafkaRecord, reason: str, namespace: str = "") -> OutgoingRecord:
    """The record that sets ``record`` aside in the namespace's quarantine topic."""
    raw: list[tuple[str, bytes | None]] = list(record.headers() or ())
    raw += [
        (props.QUARANTINE_REASON, reason.encode("utf-8")),
        (SOURCE_TOPIC, (record.topic() or "").encode("utf-8")),
        (SOURCE_PARTITION, str(record.partition()).encode("utf-8")),
        (SOURCE_OFFSET, str(record.offset()).encode("utf-8")),
    ]
    return OutgoingRecord(
        topic=to_kafka_topic(QUARANTINE_TOPIC, namespace),
        value=record.value() or b"",
        key=record.key(),
        headers=raw,
    )
