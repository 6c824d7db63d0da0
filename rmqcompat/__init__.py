"""rmqcompat: Apache RocketMQ's consumer-retry semantics on Apache Kafka."""

from rmqcompat.config import ClientConfig
from rmqcompat.errors import (
    ClientStateError,
    ConfigError,
    FatalSendError,
    InvalidNameError,
    MalformedHeaderError,
    MessageTooLargeError,
    RetriableSendError,
    RmqCompatError,
    SendError,
    TopologyError,
)
from rmqcompat.message import Message, MessageExt, MessageQueue

__all__ = [
    "ClientConfig",
    "ClientStateError",
    "ConfigError",
    "FatalSendError",
    "InvalidNameError",
    "MalformedHeaderError",
    "Message",
    "MessageExt",
    "MessageQueue",
    "MessageTooLargeError",
    "RetriableSendError",
    "RmqCompatError",
    "SendError",
    "TopologyError",
]
