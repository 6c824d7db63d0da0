"""The one decision "what happens to a failed message" (RocketMQ's send-back rules):
delay level, retry topic, dead-letter topic or discard. Pure; every consume service, the
consume timeout and the send-back-failure path use it."""

from rmqcompat.retry.decision import (
    CONSUME_TIMEOUT_LEVEL,
    DEFAULT_MAX_RECONSUME_TIMES,
    DLQ_NOW,
    FIRST_RETRY_LEVEL,
    USE_DEFAULT_MAX,
    Destination,
    DestinationKind,
    RetryPolicy,
    max_reconsume_times_of,
    retry_level,
    route_failed,
    sendback_properties,
)

__all__ = [
    "CONSUME_TIMEOUT_LEVEL",
    "DEFAULT_MAX_RECONSUME_TIMES",
    "DLQ_NOW",
    "FIRST_RETRY_LEVEL",
    "USE_DEFAULT_MAX",
    "Destination",
    "DestinationKind",
    "RetryPolicy",
    "max_reconsume_times_of",
    "retry_level",
    "route_failed",
    "sendback_properties",
]
