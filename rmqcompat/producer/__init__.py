"""The producer: ``DefaultMQProducer``, its results, and the durable spool."""

from rmqcompat.producer.failures import Backoff, is_retriable
from rmqcompat.producer.producer import DefaultMQProducer
from rmqcompat.producer.send_result import SendResult, SendStatus
from rmqcompat.producer.spool import Spool, SpoolCorruptError, SpoolEntry
from rmqcompat.producer.submission import SendCallback

__all__ = [
    "Backoff",
    "DefaultMQProducer",
    "SendCallback",
    "SendResult",
    "SendStatus",
    "Spool",
    "SpoolCorruptError",
    "SpoolEntry",
    "is_retriable",
]
