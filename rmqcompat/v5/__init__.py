"""RocketMQ 5's Python client API (``rocketmq-python-client`` 5.1.2) on Kafka.

The names of upstream's ``rocketmq.__all__``, with its semantics: see the docs page
"RocketMQ 5 API" for what each call means on Kafka and what differs. ``from rocketmq
import ...`` resolves here once the ``rocketmq`` shim is installed.
"""

from __future__ import annotations

from rmqcompat.v5.config import ClientConfiguration, Credentials
from rmqcompat.v5.filter import FilterExpression, FilterType
from rmqcompat.v5.message import Message, MessageType
from rmqcompat.v5.producer import Producer
from rmqcompat.v5.push import ConsumeResult, MessageListener, PushConsumer
from rmqcompat.v5.receipt import SendReceipt, TransactionResolution
from rmqcompat.v5.simple import SimpleConsumer
from rmqcompat.v5.transaction import Transaction, TransactionChecker

#: Marks rmqcompat's stand-in for the ``rocketmq`` module (see :mod:`rmqcompat.v5.shim`).
RMQCOMPAT_SHIM = True

__all__ = [
    "ClientConfiguration",
    "ConsumeResult",
    "Credentials",
    "FilterExpression",
    "FilterType",
    "Message",
    "MessageListener",
    "MessageType",
    "Producer",
    "PushConsumer",
    "SendReceipt",
    "SimpleConsumer",
    "Transaction",
    "TransactionChecker",
    "TransactionResolution",
]
