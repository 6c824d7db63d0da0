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
import threading
from collections.abc import Iterable
from concurrent.futures import Future
from typing import Any

from rmqcompat.clock import epoch_ms
from rmqcompat.errors import RmqCompatError
from rmqcompat.message import BROKER_NAME, MessageExt
from rmqcompat.producer import DefaultMQProducer, SendResult
from rmqcompat.transaction import CheckSettings, LocalTransactionState, TransactionMQProducer
from rmqcompat.v5.config import ClientConfiguration
from rmqcompat.v5.exceptions import (
    IllegalArgumentException,
    IllegalStateException,
    translate,
)
from rmqcompat.v5.futures import in_thread
from rmqcompat.v5.message import Message
from rmqcompat.v5.outgoing import outgoing
from rmqcompat.v5.recall import RecallWriter, checked, encode_handle
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
        self._lock = threading.Lock()
        self._recalls: RecallWriter | None = None

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
        """Recall the delayed message of ``recall_handle`` (its ``SendReceipt``'s) before
        it is due: it is never delivered. Returns its message id. See :mod:`.recall`.

        Raises:
            IllegalStateException: not running.
            InternalErrorException: code 50001, upstream's refusals: an invalid handle,
                another topic, a delivery time already past (delivered, or not delayed).
            ProxyTimeoutException: Kafka did not take the recall in time.
        """
        self._require_running()
        handle = checked(recall_handle, topic, BROKER_NAME, epoch_ms())
        with self._lock:
            if self._recalls is None:
                try:
                    self._recalls = RecallWriter(self._config.client, self._config.request_timeout)
                except RmqCompatError as exc:  # the recall topic could not be created
                    raise translate(exc) from exc
            writer = self._recalls
        writer.write(handle)
        return handle.message_id

    def recall_message_async(self, topic: str, recall_handle: str) -> Future[str]:
        """:meth:`recall_message` on a helper thread; the future gets the id or the error."""
        return in_thread(lambda: self.recall_message(topic, recall_handle), "rmqcompat-v5-recall")

    def _require_running(self) -> None:
        if not self._running:
            raise IllegalStateException("producer is not running now.")


def _receipt(message: Message, result: SendResult) -> SendReceipt:
    message.message_id = result.msg_id
    deliver_ms = message.delivery_time_ms()
    handle = None
    if deliver_ms is not None and message.topic:
        handle = encode_handle(message.topic, BROKER_NAME, deliver_ms, result.msg_id)
    return SendReceipt(result.msg_id, None, result.message_queue, result.queue_offset, handle)
