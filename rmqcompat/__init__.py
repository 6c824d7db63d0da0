"""rmqcompat: Apache RocketMQ's consumer-retry semantics on Apache Kafka.

The public names below are imported on first use (PEP 562), so that importing a light
module such as ``rmqcompat.topics.naming`` loads neither confluent-kafka nor
prometheus-client nor the producer, consumer and forwarder packages.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what type checkers and IDEs see; at runtime see __getattr__ below
    from rmqcompat.config import ClientConfig
    from rmqcompat.consumer import (
        ConsumeConcurrentlyContext,
        ConsumeConcurrentlyStatus,
        ConsumeFromWhere,
        ConsumeOrderlyContext,
        ConsumeOrderlyStatus,
        ConsumerFailedError,
        ConsumerSettings,
        DefaultMQPushConsumer,
        MessageListenerConcurrently,
        MessageListenerOrderly,
        MessageModel,
    )
    from rmqcompat.errors import (
        BrokerUnreachableError,
        ClientStateError,
        ConfigError,
        FatalSendError,
        InvalidMessageError,
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
    from rmqcompat.transaction import (
        CheckSettings,
        LocalTransactionState,
        TransactionListener,
        TransactionMQProducer,
        TransactionSendResult,
    )

#: public name -> the module that defines it (imported on first access).
_EXPORTS: dict[str, str] = {
    "ClientConfig": "rmqcompat.config",
    **dict.fromkeys(
        (
            "ConsumeConcurrentlyContext",
            "ConsumeConcurrentlyStatus",
            "ConsumeFromWhere",
            "ConsumeOrderlyContext",
            "ConsumeOrderlyStatus",
            "ConsumerFailedError",
            "ConsumerSettings",
            "DefaultMQPushConsumer",
            "MessageListenerConcurrently",
            "MessageListenerOrderly",
            "MessageModel",
        ),
        "rmqcompat.consumer",
    ),
    **dict.fromkeys(
        (
            "BrokerUnreachableError",
            "ClientStateError",
            "ConfigError",
            "FatalSendError",
            "InvalidMessageError",
            "InvalidNameError",
            "MalformedHeaderError",
            "MessageTooLargeError",
            "RetriableSendError",
            "RmqCompatError",
            "SendError",
            "TopologyError",
        ),
        "rmqcompat.errors",
    ),
    "DelayForwarder": "rmqcompat.forwarder",
    "ForwarderFailedError": "rmqcompat.forwarder",
    "Message": "rmqcompat.message",
    "MessageExt": "rmqcompat.message",
    "MessageQueue": "rmqcompat.message",
    "DefaultMQProducer": "rmqcompat.producer",
    "SendResult": "rmqcompat.producer",
    "SendStatus": "rmqcompat.producer",
    "Spool": "rmqcompat.producer",
    **dict.fromkeys(
        (
            "CheckSettings",
            "LocalTransactionState",
            "TransactionListener",
            "TransactionMQProducer",
            "TransactionSendResult",
        ),
        "rmqcompat.transaction",
    ),
}

__all__ = [
    "BrokerUnreachableError",
    "CheckSettings",
    "ClientConfig",
    "ClientStateError",
    "ConfigError",
    "ConsumeConcurrentlyContext",
    "ConsumeConcurrentlyStatus",
    "ConsumeFromWhere",
    "ConsumeOrderlyContext",
    "ConsumeOrderlyStatus",
    "ConsumerFailedError",
    "ConsumerSettings",
    "DefaultMQProducer",
    "DefaultMQPushConsumer",
    "DelayForwarder",
    "FatalSendError",
    "ForwarderFailedError",
    "InvalidMessageError",
    "InvalidNameError",
    "LocalTransactionState",
    "MalformedHeaderError",
    "Message",
    "MessageExt",
    "MessageListenerConcurrently",
    "MessageListenerOrderly",
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
    "TransactionListener",
    "TransactionMQProducer",
    "TransactionSendResult",
    "install_as_rocketmq",
]


def install_as_rocketmq() -> None:
    """Make ``import rocketmq`` give rmqcompat in this process (see
    :func:`rmqcompat.v5.shim.install_as_rocketmq`)."""
    from rmqcompat.v5.shim import install_as_rocketmq as install

    install()


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
