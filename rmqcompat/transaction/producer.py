"""``TransactionMQProducer``: RocketMQ 4.x transactional messages on Kafka transactions."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from confluent_kafka import KafkaException

from rmqcompat.clock import Clock, epoch_ms
from rmqcompat.config import ClientConfig
from rmqcompat.errors import ClientStateError, RmqCompatError
from rmqcompat.lifecycle import Lifecycle
from rmqcompat.message import DEFAULT_MAX_MESSAGE_SIZE, Message, MessageExt, MessageQueue
from rmqcompat.message_id import new_message_id
from rmqcompat.producer.send_result import SendResult, SendStatus
from rmqcompat.reachability import require_broker
from rmqcompat.topics.naming import TRANS_HALF_TOPIC, validate_group
from rmqcompat.topics.spec import TopologySpec
from rmqcompat.topics.topology import provision_topology, system_topology, transaction_topics
from rmqcompat.transaction import settings as kafka
from rmqcompat.transaction.check_service import CheckService
from rmqcompat.transaction.ender import EndTransactionError, TransactionEnder
from rmqcompat.transaction.half_sender import HalfSender
from rmqcompat.transaction.pending import PendingHalves
from rmqcompat.transaction.real_topic import RealTopicCheck
from rmqcompat.transaction.records import Half, committed_record, decision, half_record, sent_half
from rmqcompat.transaction.state import CheckSettings, LocalTransactionState, TransactionListener

_log = logging.getLogger("rmqcompat.transaction")


class TransactionsUnavailableError(RmqCompatError):
    """``start()``: the broker refused Kafka transactions (the cause is chained)."""


@dataclass(frozen=True)
class TransactionSendResult(SendResult):
    """A :class:`SendResult` for the half message (``message_queue`` / ``queue_offset``
    are where it is stored) plus what the local transaction answered."""

    local_transaction_state: LocalTransactionState = LocalTransactionState.UNKNOW


class TransactionMQProducer(Lifecycle):
    """Sends half messages, runs the local transaction, commits or rolls back, and checks
    undecided half messages of its group (also those of a dead predecessor).

    ``send_message_in_transaction`` stores the half message (``acks=all``), calls
    ``listener.execute_local_transaction(msg, arg)`` and writes its decision in one Kafka
    transaction; UNKNOW, an exception or a failed decision leave it to the check service
    (:class:`CheckSettings`). Consumers see a committed message once (``read_committed``,
    librdkafka's default) and never a rolled-back one. Give each live producer of a group
    its own ``instance_name`` (default: the host name): two with the same one fence each
    other's decisions (nothing is lost; the checks settle them).

    Raises (``start``): ClientStateError, ConfigError, BrokerUnreachableError,
    TopologyError, TransactionsUnavailableError.
    """

    def __init__(
        self,
        group: str,
        bootstrap_servers: str,
        *,
        transaction_listener: TransactionListener,
        namespace: str = "",
        kafka_config: Mapping[str, Any] | None = None,
        send_msg_timeout: int = 3000,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        instance_name: str | None = None,
        check: CheckSettings | None = None,
        topology: TopologySpec | None = None,
        clock_ms: Clock = epoch_ms,
    ) -> None:
        self.group = validate_group(group)
        self.client = ClientConfig(
            bootstrap_servers,
            namespace,
            kafka_config=dict(kafka_config or {}),
            max_message_size=max_message_size,
        )
        self._listener = transaction_listener
        self._timeout_ms = send_msg_timeout
        self.instance_name = instance_name or socket.gethostname()
        self.check = check or CheckSettings()
        self._topics = system_topology(
            *transaction_topics(),
            spec=topology,
            namespace=namespace,
            max_message_size=max_message_size,
        )
        self._clock_ms = clock_ms
        tid = kafka.transactional_id(group, self.instance_name, namespace)
        self._sender = HalfSender(
            kafka.half_producer(self.client, send_msg_timeout), send_msg_timeout / 1000
        )
        self._real_topics = RealTopicCheck(self.client, send_msg_timeout / 1000)
        self._ender = TransactionEnder(
            kafka.ender(self.client, tid, send_msg_timeout),
            namespace,
            kafka.TRANSACTION_CALL_TIMEOUT_S,
        )
        self._checks = CheckService(
            kafka.check_consumer(self.client, kafka.check_group_id(group, namespace)),
            namespace,
            PendingHalves(group, self.check),
            self._ender,
            self._check,
            clock_ms,
            admin_settings=self.client.librdkafka("admin"),
        )
        self._state = "created"
        self._lock = threading.Lock()

    def start(self) -> None:
        """Check the broker, create the half/op topics, fence a predecessor, start checking."""
        with self._lock:
            if self._state != "created":
                raise ClientStateError(f"transaction producer {self.group} is {self._state}")
            require_broker(self.client, self._timeout_ms / 1000)
            provision_topology(self.client.librdkafka("admin"), self._topics)
            try:
                self._ender.start()
            except KafkaException as exc:
                raise TransactionsUnavailableError(
                    f"the broker refused Kafka transactions for {self._ender.transactional_id}:"
                    f" {exc}"
                ) from exc
            self._sender.start()
            self._checks.start()
            self._state = "running"

    def shutdown(self) -> None:
        """Stop checking and close the clients; undecided halves wait for the next start."""
        with self._lock:
            if self._state != "running":
                self._state = "stopped"
                return
            self._state = "stopped"
        self._checks.stop()
        self._sender.close()
        self._ender.close()

    def healthy(self) -> bool:
        """False once the check service stopped on an error."""
        return self._state == "running" and self._checks.alive()

    def send_message_in_transaction(self, msg: Message, arg: Any = None) -> TransactionSendResult:
        """Store ``msg`` as a half message, run the local transaction, send its decision.

        A decision that could not be written is logged and left to the check service.

        A message its real topic could not take (the topic does not exist, or the record
        is over its ``max.message.bytes``) is refused before the half is stored, as
        RocketMQ refuses it: a COMMIT could never deliver it.

        Raises:
            ClientStateError: not running. MessageTooLargeError: over
                ``max_message_size`` (before any I/O) or over the real topic's limit.
            RetriableSendError / FatalSendError: the half message was not stored (the
                local transaction did not run); ``UNKNOWN_TOPIC_OR_PART`` for a real
                topic that does not exist.
        """
        half = self.send_half(msg)
        state = self._execute(half.message, arg)
        kind = decision(state)
        if kind is not None:
            try:
                self._ender.end(half, kind)
            except EndTransactionError as exc:
                _log.warning("%s; the check service will settle it", exc)
        queue = MessageQueue(TRANS_HALF_TOPIC, half.partition)
        return TransactionSendResult(
            SendStatus.SEND_OK, half.message.msg_id, "", queue, half.offset, None, 1, state
        )

    def send_half(self, msg: Message) -> Half:
        """Store ``msg`` as an undecided half message (no local transaction runs).

        For callers that decide later (RocketMQ 5's ``Transaction.commit()``): pass the
        half to :meth:`end_transaction`; until then the check service asks the listener's
        ``check_local_transaction`` once the half is past its check immunity.

        Raises:
            ClientStateError, MessageTooLargeError, RetriableSendError, FatalSendError: as
                :meth:`send_message_in_transaction`.
        """
        if self._state != "running":
            raise ClientStateError(f"transaction producer {self.group} is {self._state}")
        msg.check_size(self.client.max_message_size)
        msg_id = new_message_id()
        namespace = self.client.namespace
        record = half_record(msg, self.group, namespace, msg_id, self._clock_ms())
        committed = committed_record(sent_half(record, 0, 0, 0), namespace)
        self._real_topics.check(self._sender.producer, msg, committed)
        partition, offset, stored_ms = self._sender.send(record, msg)
        return sent_half(record, partition, offset, stored_ms)

    def end_transaction(self, half: Half, state: LocalTransactionState) -> None:
        """Commit (``COMMIT_MESSAGE``) or roll back (``ROLLBACK_MESSAGE``) a half message
        of :meth:`send_half`; ``UNKNOW`` leaves it to the check service.

        Raises:
            ClientStateError: not running. EndTransactionError: the decision was not
                written (the check service settles the half later).
        """
        if self._state != "running":
            raise ClientStateError(f"transaction producer {self.group} is {self._state}")
        kind = decision(state)
        if kind is not None:
            self._ender.end(half, kind)

    def _execute(self, msg: MessageExt, arg: Any) -> LocalTransactionState:
        return _answer(
            "execute_local_transaction",
            msg,
            lambda: self._listener.execute_local_transaction(msg, arg),
        )

    def _check(self, msg: MessageExt) -> LocalTransactionState:
        return _answer(
            "check_local_transaction", msg, lambda: self._listener.check_local_transaction(msg)
        )


def _answer(what: str, msg: MessageExt, call: Any) -> LocalTransactionState:
    """The listener's answer; anything but a LocalTransactionState is UNKNOW, logged."""
    try:
        state = call()
    except Exception:
        _log.exception("%s raised for %s; UNKNOW", what, msg.msg_id)
        return LocalTransactionState.UNKNOW
    if isinstance(state, LocalTransactionState):
        return state
    _log.warning("%s returned %r for %s; UNKNOW", what, state, msg.msg_id)
    return LocalTransactionState.UNKNOW
