"""Push consumers: RocketMQ's concurrent, orderly and broadcasting consumption on Kafka."""

from rmqcompat.consumer.listener import (
    ConsumeConcurrentlyContext,
    ConsumeConcurrentlyStatus,
    ConsumeFromWhere,
    ConsumeOrderlyContext,
    ConsumeOrderlyStatus,
    MessageListenerConcurrently,
    MessageListenerOrderly,
    MessageModel,
)
from rmqcompat.consumer.push_consumer import ConsumerFailedError, DefaultMQPushConsumer
from rmqcompat.consumer.settings import ConsumerSettings

__all__ = [
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
]
