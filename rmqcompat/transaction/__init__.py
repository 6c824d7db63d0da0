"""Transactional messages: half messages, local transactions, checks (RocketMQ 4.x)."""

from rmqcompat.transaction.ender import EndTransactionError
from rmqcompat.transaction.producer import (
    TransactionMQProducer,
    TransactionSendResult,
    TransactionsUnavailableError,
)
from rmqcompat.transaction.state import CheckSettings, LocalTransactionState, TransactionListener

__all__ = [
    "CheckSettings",
    "EndTransactionError",
    "LocalTransactionState",
    "TransactionListener",
    "TransactionMQProducer",
    "TransactionSendResult",
    "TransactionsUnavailableError",
]
