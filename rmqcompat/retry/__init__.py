"""The one decision "what happens to a failed message" (RocketMQ's rules for concurrent,
orderly and broadcasting consumption): delay level, dead-letter topic, in place again or
discard. Pure; every consume service, the consume timeout, orderly suspension and the
send-back-failure path use it."""

from rmqcompat.retry.decision import (
    BROADCASTING_DROP,
    CONSUME_TIMEOUT_LEVEL,
    DEAD_LETTER_OFF,
    DEFAULT_MAX_RECONSUME_TIMES,
    DLQ_NOW,
    FIRST_RETRY_LEVEL,
    USE_DEFAULT_MAX,
    Destination,
    DestinationKind,
    RetryPolicy,
    dead_letter_properties,
    max_reconsume_times_of,
    retry_level,
    route_failed,
    sendback_properties,
)

__all__ = [
    "BROADCASTING_DROP",
    "CONSUME_TIMEOUT_LEVEL",
    "DEAD_LETTER_OFF",
    "DEFAULT_MAX_RECONSUME_TIMES",
    "DLQ_NOW",
    "FIRST_RETRY_LEVEL",
    "USE_DEFAULT_MAX",
    "Destination",
    "DestinationKind",
    "RetryPolicy",
    "dead_letter_properties",
    "max_reconsume_times_of",
    "retry_level",
    "route_failed",
    "sendback_properties",
]
