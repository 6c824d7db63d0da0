"""Topic topology: logical RocketMQ names, their legal Kafka names, delay levels, specs."""

from rmqcompat.topics.delay_levels import DEFAULT_MESSAGE_DELAY_LEVEL, DelayLevels
from rmqcompat.topics.naming import (
    QUARANTINE_TOPIC,
    TRACE_TOPIC,
    delay_topic,
    dlq_topic,
    from_kafka_topic,
    is_dlq_topic,
    is_retry_topic,
    retry_topic,
    to_kafka_topic,
    validate_group,
    validate_namespace,
    validate_topic,
)

__all__ = [
    "DEFAULT_MESSAGE_DELAY_LEVEL",
    "QUARANTINE_TOPIC",
    "TRACE_TOPIC",
    "DelayLevels",
    "delay_topic",
    "dlq_topic",
    "from_kafka_topic",
    "is_dlq_topic",
    "is_retry_topic",
    "retry_topic",
    "to_kafka_topic",
    "validate_group",
    "validate_namespace",
    "validate_topic",
]
