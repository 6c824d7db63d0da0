"""Push consumers: RocketMQ's concurrent and broadcasting consumption on Kafka."""

from rmqcompat.consumer.listener import (
    ConsumeConcurrentlyContext,
    ConsumeConcurrentlyStatus,
    ConsumeFromWhere,
    MessageListenerConcurrently,
    MessageModel,
)
from rmqcompat.consumer.push_consumer import ConsumerFailedError, DefaultMQPushConsumer
from rmqcompat.consumer.settings import ConsumerSettings

__all__ = [
    "ConsumeConcurrentlyContext",
    "ConsumeConcurrentlyStatus",
    "ConsumeFromWhere",
    "ConsumerFailedError",
    "ConsumerSettings",
    "DefaultMQPushConsumer",
    "MessageListenerConcurrently",
    "MessageModel",
]
