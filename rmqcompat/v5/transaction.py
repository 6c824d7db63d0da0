"""``Transaction`` and ``TransactionChecker``: RocketMQ 5 transactions on the half-message
machinery of :mod:`rmqcompat.transaction`.

``Producer.begin_transaction()`` returns a :class:`Transaction`; ``send(message,
transaction)`` stores one half message (consumers do not see it); ``commit()`` or
``rollback()`` decides it, whenever the app is ready. A half never decided (the app
died, or commit failed) is checked: after the check immunity the producer's
:class:`TransactionChecker` is asked, also for halves another producer of the same
group left behind.
"""

from __future__ import annotations

import abc
import threading

from rmqcompat.errors import RmqCompatError
from rmqcompat.message import Message as CoreMessage
from rmqcompat.message import MessageQueue
from rmqcompat.transaction import LocalTransactionState, TransactionMQProducer
from rmqcompat.transaction.records import Half
from rmqcompat.v5.exceptions import IllegalArgumentException, translate
from rmqcompat.v5.message import Message
from rmqcompat.v5.receipt import SendReceipt, TransactionResolution


class TransactionChecker(abc.ABC):
    """Answers for a half message whose transaction was never decided."""

    @abc.abstractmethod
    def check(self, message: Message) -> TransactionResolution:
        """COMMIT or ROLLBACK; anything else (or an exception) asks again later."""


def as_state(answer: object) -> LocalTransactionState:
    """A checker's answer as the core's state (anything unknown: UNKNOW)."""
    if answer == TransactionResolution.COMMIT:
        return LocalTransactionState.COMMIT_MESSAGE
    if answer == TransactionResolution.ROLLBACK:
        return LocalTransactionState.ROLLBACK_MESSAGE
    return LocalTransactionState.UNKNOW


class Transaction:
    """One transaction: at most one half message, then one decision.

    Raises (``commit``/``rollback``): IllegalArgumentException when no half message
    was sent; ``InternalErrorException`` when the decision could not be written (the
    checker settles the half later).
    """

    def __init__(self, native: TransactionMQProducer) -> None:
        self._native = native
        self._lock = threading.Lock()
        self._message: Message | None = None
        self._half: Half | None = None

    def send_half(self, message: Message, core_message: CoreMessage) -> SendReceipt:
        """Store the half message (called by ``Producer.send``)."""
        with self._lock:
            if self._message is not None:
                raise IllegalArgumentException(
                    f"message already existed in transaction, topic:{message.topic}"
                )
            self._message = message
        try:
            half = self._native.send_half(core_message)
        except RmqCompatError as exc:
            with self._lock:
                self._message = None
            raise translate(exc) from exc
        self._half = half
        message.message_id = half.message.msg_id
        queue = MessageQueue(message.topic or "", half.partition)
        return SendReceipt(half.message.msg_id, half.message.msg_id, queue, half.offset)

    def commit(self) -> None:
        self._end(LocalTransactionState.COMMIT_MESSAGE)

    def rollback(self) -> None:
        self._end(LocalTransactionState.ROLLBACK_MESSAGE)

    def _end(self, state: LocalTransactionState) -> None:
        if self._message is None:
            raise IllegalArgumentException("no message in transaction.")
        if self._half is None:
            raise IllegalArgumentException(
                "no transaction_id in transaction, must send half message at first."
            )
        try:
            self._native.end_transaction(self._half, state)
        except RmqCompatError as exc:
            raise translate(exc) from exc

    @property
    def message_id(self) -> str | None:
        return self._message.message_id if self._message else None
