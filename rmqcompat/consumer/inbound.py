"""From a consumed Kafka record to what the listener sees (SEMANTICS section 6)."""

from __future__ import annotations

from rmqcompat import properties as props
from rmqcompat.message import MessageExt
from rmqcompat.wire import KafkaRecord, decode_record


def to_listener_message(record: KafkaRecord, own_retry_topic: str) -> MessageExt:
    """Decode ``record``; a message of the group's own retry topic gets its original topic.

    Raises:
        MalformedHeaderError / InvalidNameError: a poison record (quarantine it).
    """
    msg = decode_record(record)
    if msg.topic == own_retry_topic:
        original = msg.properties.get(props.RETRY_TOPIC)
        if original:
            msg.topic = original
    return msg
