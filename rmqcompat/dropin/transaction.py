"""The drop-in ``TransactionMQProducer`` on :class:`rmqcompat.transaction.TransactionMQProducer`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rmqcompat.dropin.enums import SendResult, SendStatus, TransactionStatus, as_status
from rmqcompat.dropin.message import Message, ReceivedMessage, Text
from rmqcompat.dropin.producer import Producer
from rmqcompat.errors import ClientStateError, RmqCompatError
from rmqcompat.exceptions import ProducerSendSyncFailed, ProducerStartFailed, wrap
from rmqcompat.message import MessageExt
from rmqcompat.transaction import CheckSettings, LocalTransactionState
from rmqcompat.transaction import TransactionMQProducer as NativeTransactionProducer

LocalExecute = Callable[[ReceivedMessage, Any], Any]
Checker = Callable[[ReceivedMessage], Any]

_STATES = {
    TransactionStatus.COMMIT: LocalTransactionState.COMMIT_MESSAGE,
    TransactionStatus.ROLLBACK: LocalTransactionState.ROLLBACK_MESSAGE,
    TransactionStatus.UNKNOWN: LocalTransactionState.UNKNOW,
}


def as_state(answer: Any) -> Any:
    """A ``TransactionStatus`` answer as the native state; anything else is passed on
    as it is, and the native producer logs it and takes it as UNKNOW."""
    status = as_status(TransactionStatus, answer)
    return answer if status is None else _STATES[TransactionStatus(status)]


@dataclass(frozen=True)
class _Call:
    local_execute: LocalExecute
    user_args: Any


class _Listener:
    """The native listener: the per-call ``local_execute`` rides in the ``arg``."""

    def __init__(self, checker: Checker) -> None:
        self._checker = checker

    def execute_local_transaction(self, msg: MessageExt, arg: _Call) -> Any:
        return as_state(arg.local_execute(ReceivedMessage(msg), arg.user_args))

    def check_local_transaction(self, msg: MessageExt) -> Any:
        return as_state(self._checker(ReceivedMessage(msg)))


class TransactionMQProducer(Producer):
    """``TransactionMQProducer(group_id, checker_callback, user_args=None, timeout=None,
    compress_level=None, max_message_size=None)``.

    ``checker_callback(msg)`` answers checks of undecided half messages of the group, on
    the check service's thread (also for halves a dead producer of the group left).
    ``user_args`` of the constructor is accepted and unused, as upstream. Plain sends
    (``send_sync``...) work too. An exception or an answer that is not a
    ``TransactionStatus`` counts as UNKNOWN and is logged (upstream lets the exception
    escape into its C callback).
    """

    def __init__(
        self,
        group_id: Text,
        checker_callback: Checker,
        user_args: Any = None,
        timeout: int | None = None,
        compress_level: int | None = None,
        max_message_size: int | None = None,
    ) -> None:
        super().__init__(group_id, False, timeout, compress_level, max_message_size)
        self._listener = _Listener(checker_callback)
        self.user_args = user_args
        self._check = CheckSettings()
        self._transactions: NativeTransactionProducer | None = None

    def set_check_settings(self, check: CheckSettings) -> None:
        """rmqcompat extension: check immunity, interval and maximum (RocketMQ's
        defaults: 6 s, 60 s, 15)."""
        self._setting("set_check_settings")
        self._check = check

    def start(self) -> None:
        """Raises: ProducerStartFailed (also when the broker refuses transactions)."""
        options = self._options
        try:
            native = NativeTransactionProducer(
                options.group,
                options.bootstrap_servers or "",
                transaction_listener=self._listener,
                namespace=options.namespace,
                kafka_config=self._kafka_config(),
                send_msg_timeout=self._timeout_ms,
                max_message_size=self._max_message_size,
                instance_name=options.instance_name,
                check=self._check,
            )
        except RmqCompatError as exc:
            raise wrap(ProducerStartFailed, exc) from exc
        super().start()
        try:
            native.start()
        except RmqCompatError as exc:
            super().shutdown()
            raise wrap(ProducerStartFailed, exc) from exc
        self._transactions = native

    def shutdown(self) -> None:
        native, self._transactions = self._transactions, None
        if native is not None:
            native.shutdown()
        super().shutdown()

    def send_message_in_transaction(
        self, message: Message, local_execute: LocalExecute, user_args: Any = None
    ) -> SendResult:
        """Store ``message`` as a half message, call ``local_execute(msg, user_args)``
        and commit, roll back or leave it to the checker as it answers.

        Raises:
            ProducerSendSyncFailed: the half message was not stored (``local_execute``
                did not run).
        """
        native = self._transactions
        try:
            if native is None:
                raise ClientStateError("start() the producer before sending")
            result = native.send_message_in_transaction(
                message.to_native(), _Call(local_execute, user_args)
            )
        except RmqCompatError as exc:
            raise wrap(ProducerSendSyncFailed, exc) from exc
        return SendResult(SendStatus.OK, result.msg_id, result.queue_offset)
