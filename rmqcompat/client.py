"""Drop-in for ``rocketmq.client`` (apache/rocketmq-client-python).

Apps change ``from rocketmq.client import ...`` to ``from rmqcompat.client import ...``
and give Kafka bootstrap servers to ``set_name_server_address``; the README's "Drop-in
for rocketmq-client-python" lists what differs.
"""

from rmqcompat.dropin.consumer import PushConsumer
from rmqcompat.dropin.enums import (
    ConsumeStatus,
    MessageModel,
    SendResult,
    SendStatus,
    TraceModel,
    TransactionStatus,
)
from rmqcompat.dropin.message import Message, ReceivedMessage
from rmqcompat.dropin.producer import Producer
from rmqcompat.dropin.transaction import TransactionMQProducer

__all__ = [
    "ConsumeStatus",
    "Message",
    "MessageModel",
    "Producer",
    "PushConsumer",
    "ReceivedMessage",
    "SendResult",
    "SendStatus",
    "TraceModel",
    "TransactionMQProducer",
    "TransactionStatus",
]
