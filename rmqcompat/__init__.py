"""rmqcompat: Apache RocketMQ's consumer-retry semantics on Apache Kafka."""

from rmqcompat.config import ClientConfig
from rmqcompat.consumer import (
    ConsumeConcurrentlyContext,
    ConsumeConcurrentlyStatus,
    ConsumeFromWhere,
    ConsumerFailedError,
    ConsumerSettings,
    DefaultMQPushConsumer,
    MessageListenerConcurrently,
    MessageModel,
)
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
from rmqcompat.forwarder import DelayForwarder, ForwarderFailedError
from rmqcompat.message import Message, MessageExt, MessageQueue
from rmqcompat.producer import DefaultMQProducer, SendResult, SendStatus, Spool

__all__ = [
    "ClientConfig",
    "ClientStateError",
    "ConfigError",
    "ConsumeConcurrentlyContext",
    "ConsumeConcurrentlyStatus",
    "ConsumeFromWhere",
    "ConsumerFailedError",
    "ConsumerSettings",
    "DefaultMQProducer",
    "DefaultMQPushConsumer",
    "DelayForwarder",
    "FatalSendError",
    "ForwarderFailedError",
    "InvalidNameError",
    "MalformedHeaderError",
    "Message",
    "MessageExt",
    "MessageListenerConcurrently",
    "MessageModel",
    "MessageQueue",
    "MessageTooLargeError",
    "RetriableSendError",
    "RmqCompatError",
    "SendError",
    "SendResult",
    "SendStatus",
    "Spool",
    "TopologyError",
]
