"""The 5.x ``Producer`` on rmqcompat's producer pipeline and half-message machinery.

``send`` blocks until Kafka acknowledged the record (``acks=all``) and returns a
:class:`SendReceipt`; ``send_async`` returns a ``concurrent.futures.Future`` of one. The
message type follows from the fields (:func:`~rmqcompat.v5.message.send_type`): a FIFO
message is keyed by its group (same partition, in order), a DELAY message is parked
and delivered by the delay forwarder at its time, a TRANSACTION message (``send(msg,
transaction)``) is a half message until ``commit()``. A Kafka topic has no message type,
so upstream's "topic accepts these types" check does not exist here.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from concurrent.futures import Future
from typing import Any

from rmqcompat.errors import RmqCompatError
from rmqcompat.message import MessageExt
from rmqcompat.producer import DefaultMQProducer, SendResult
from rmqcompat.transaction import CheckSettings, LocalTransactionState, TransactionMQProducer
from rmqcompat.v5.config import ClientConfiguration
from rmqcompat.v5.exceptions import (
    UNSUPPORTED,
    IllegalArgumentException,
    IllegalStateException,
    UnsupportedException,
    translate,
)
from rmqcompat.v5.message import Message
from rmqcompat.v5.outgoing import outgoing
from rmqcompat.v5.receipt import SendReceipt
from rmqcompat.v5.transaction import Transaction, TransactionChecker, as_state

_log = logging.getLogger("rmqcompat.v5")

#: RocketMQ 5 producers have no group; rmqcompat's producers and transaction checks need
#: one, stable across restarts so a restarted producer checks its predecessor's halves.
DEFAULT_PRODUCER_GROUP = "rmqcompat-v5-producer"


class _CheckerListener:
    """The core's transaction listener around a 5.x checker (checks only)."""

    def __init__(self, checker: TransactionChecker, namespace: str) -> None:
        self._checker = checker
        self._namespace = namespace

    def execute_local_transaction(self, msg: MessageExt, arg: Any) -> LocalTransactionState:
        return LocalTransactionState.UNKNOW  # never called: 5.x decides with commit()

    def check_local_transaction(self, msg: MessageExt) -> LocalTransactionState:
        return as_state(self._checker.check(Message.received(msg, self._namespace, None)))


class Producer:
    """``Producer(client_configuration, topics=None, checker=None)``.

    The constructor does no I/O. ``startup`` checks the broker (and, with a checker,
    starts the transaction machinery); ``shutdown`` waits for pending sends.
    ``producer_group`` and ``check`` are rmqcompat extensions (the group whose undecided
    halves this producer checks; check immunity, interval and maximum).

    Raises: IllegalStateException (not running), IllegalArgumentException (bad input,
    before any I/O), NotFoundException (code 40402: the topic does not exist),
    ProxyTimeoutException (the broker did not answer in time).
    """

    def __init__(
        self,
        client_configuration: ClientConfiguration,
        topics: Iterable[str] | None = None,
        checker: TransactionChecker | None = None,
        *,
        producer_group: str = DEFAULT_PRODUCER_GROUP,
        check: CheckSettings | None = None,
    ) -> None:
        if not isinstance(client_configuration, ClientConfiguration):
            raise IllegalArgumentException("client_configuration must be a ClientConfiguration")
        self._config = client_configuration
        self._topics = tuple(topics or ())
        self._checker = checker
        client = client_configuration.client
        timeout_ms = client_configuration.request_timeout * 1000
        try:
            self._native = DefaultMQProducer(
                producer_group,
                client.bootstrap_servers,
                send_msg_timeout=timeout_ms,
                **client_configuration.core_settings(),
            )
            self._transactions = (
                TransactionMQProducer(
                    producer_group,
                    client.bootstrap_servers,
                    transaction_listener=_CheckerListener(checker, client.namespace),
                    namespace=client.namespace,
                    kafka_config=client.kafka_config,
                    send_msg_timeout=timeout_ms,
                    check=check,
                )
                if checker is not None
                else None
            )
        except RmqCompatError as exc:
            raise translate(exc) from exc
        self._running = False

    def __str__(self) -> str:
        return f"PRODUCER client:{self._config.client.bootstrap_servers}"

    @property
    def is_running(self) -> bool:
        return self._running

    def startup(self) -> None:
        """Connect. Raises: ProxyTimeoutException (no broker), IllegalStateException."""
        if self._running:
            raise IllegalStateException("producer is already running")
        try:
            self._native.start()
            if self._transactions is not None:
                self._transactions.start()
        except RmqCompatError as exc:
            self._native.shutdown()
            raise translate(exc) from exc
        self._running = True

    def shutdown(self) -> None:
        """Wait for pending sends and close; undecided halves wait for the checker."""
        if not self._running:
            raise IllegalStateException("producer is not running now.")
        self._running = False
        if self._transactions is not None:
            self._transactions.shutdown()
        self._native.shutdown()

    def send(self, message: Message, transaction: Transaction | None = None) -> SendReceipt:
        """Send and wait for the broker's acknowledgement.

        Raises:
            IllegalStateException: not running.
            IllegalArgumentException: bad message (see :func:`outgoing`), before any I/O.
            NotFoundException: the topic does not exist (40402).
            ProxyTimeoutException: retries ran out on busy/unreachable brokers.
        """
        self._require_running()
        out = outgoing(message, transaction is not None, self._config.client.max_message_size)
        message.message_type = out.message_type
        if transaction is not None:
            if not isinstance(transaction, Transaction):
                raise IllegalArgumentException("transaction must come from begin_transaction()")
            return transaction.send_half(message, out.core)
        try:
            result = self._native.send(out.core, out.sharding_key)
        except RmqCompatError as exc:
            raise translate(exc) from exc
        return _receipt(message, result)

    def send_async(self, message: Message) -> Future[SendReceipt]:
        """Send without waiting: the future gets the receipt or the 5.x exception.

        Raises: as :meth:`send`, for what is known before any I/O.
        """
        self._require_running()
        out = outgoing(message, False, self._config.client.max_message_size)
        message.message_type = out.message_type
        future: Future[SendReceipt] = Future()

        def settle(outcome: SendResult | BaseException) -> None:
            if isinstance(outcome, RmqCompatError):
                future.set_exception(translate(outcome))
            elif isinstance(outcome, BaseException):
                future.set_exception(outcome)
            else:
                future.set_result(_receipt(message, outcome))

        try:
            self._native.send_async(out.core, settle, out.sharding_key)
        except RmqCompatError as exc:
            raise translate(exc) from exc
        return future

    def begin_transaction(self) -> Transaction:
        """A new transaction. Raises: IllegalStateException, IllegalArgumentException
        (the producer has no checker)."""
        if not self._running:
            raise IllegalStateException(
                "unable to begin transaction because producer is not running"
            )
        if self._transactions is None:
            raise IllegalArgumentException("Transaction checker should not be null.")
        return Transaction(self._transactions)

    def recall_message(self, topic: str, recall_handle: str) -> str:
        """Not built yet: raises UnsupportedException (50100)."""
        self._require_running()
        raise UnsupportedException(
            f"recall_message is not supported by rmqcompat yet (topic {topic})", UNSUPPORTED
        )

    def _require_running(self) -> None:
        if not self._running:
            raise IllegalStateException("producer is not running now.")


def _receipt(message: Message, result: SendResult) -> SendReceipt:
    message.message_id = result.msg_id
    return SendReceipt(result.msg_id, None, result.message_queue, result.queue_offset)
