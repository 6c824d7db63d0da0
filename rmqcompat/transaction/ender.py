"""Ends transactions: each decision is ONE Kafka transaction of a transactional producer.

COMMIT writes the committed message to its real topic and a ``commit`` op; ROLLBACK only
a ``rollback`` op; a check writes a ``check`` op (the durable count). Read-committed
readers see the committed message and its op together or not at all.

The ``transactional.id`` is fixed per producer group and instance, so a restarted
producer fences its predecessor and aborts whatever transaction it left open. A fenced
or fatally failed producer is replaced before the next decision; a decision that failed
leaves its half message undecided, for the check service to settle.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from confluent_kafka import KafkaException, Producer

from rmqcompat.errors import RmqCompatError
from rmqcompat.producer_id import ask_for_producer_id
from rmqcompat.transaction.records import (
    Half,
    OpKind,
    committed_record,
    discarded_copy,
    op_record,
)
from rmqcompat.wire import OutgoingRecord

_log = logging.getLogger("rmqcompat.transaction")


class EndTransactionError(RmqCompatError):
    """A decision could not be written; the half message stays undecided (the check
    service asks again). The Kafka error is chained."""

    retriable = True


class TransactionEnder:
    """The transactional producer of one producer group instance (thread-safe: one
    decision at a time)."""

    def __init__(self, settings: Mapping[str, Any], namespace: str, timeout_s: float) -> None:
        self._settings = dict(settings)
        self._namespace = namespace
        self._timeout_s = timeout_s
        self._lock = threading.Lock()
        self._producer: Producer | None = None

    @property
    def transactional_id(self) -> str:
        return str(self._settings["transactional.id"])

    def start(self) -> None:
        """Create the producer and fence any earlier one of the same ``transactional.id``.

        Raises:
            KafkaException: the broker refused (e.g. no transaction support).
        """
        with self._lock:
            self._producer = self._new_producer()

    def _new_producer(self) -> Producer:
        producer = Producer(self._settings)
        ask_for_producer_id(producer)  # else init_transactions may wait 0.5 s for it
        producer.init_transactions(self._timeout_s)
        return producer

    def end(self, half: Half, kind: OpKind, check_times: int = 0, discard: bool = False) -> None:
        """Write ``kind`` for ``half``, all or nothing: with the committed message for
        COMMIT; with its copy in ``TRANS_CHECK_MAX_TIME_TOPIC`` for a ROLLBACK with
        ``discard`` (the half used up its ``check_max`` checks).

        Raises:
            EndTransactionError: the transaction failed or was aborted.
        """
        records = [op_record(half, kind, self._namespace, check_times)]
        if kind is OpKind.COMMIT:
            records.insert(0, committed_record(half, self._namespace, check_times))
        elif discard:
            records.insert(0, discarded_copy(half, self._namespace))
        with self._lock:
            try:
                self._in_transaction(records)
            except KafkaException as exc:
                self._recover(exc)
                raise EndTransactionError(
                    f"{kind.value} of half message {half.message.msg_id} failed: {exc}"
                ) from exc

    def _in_transaction(self, records: list[OutgoingRecord]) -> None:
        producer = self._producer or self._new_producer()
        self._producer = producer
        producer.begin_transaction()
        for record in records:
            kwargs: dict[str, Any] = {"key": record.key, "headers": record.headers}
            if record.partition is not None:
                kwargs["partition"] = record.partition
            producer.produce(record.topic, record.value, **kwargs)
        producer.commit_transaction(self._timeout_s)

    def _recover(self, exc: KafkaException) -> None:
        error = exc.args[0]
        producer, self._producer = self._producer, None
        if producer is None:
            return
        if not error.fatal():
            try:
                producer.abort_transaction(self._timeout_s)
                self._producer = producer
                return
            except KafkaException as abort_exc:
                _log.warning("abort after a failed transaction failed: %s", abort_exc)
        _log.warning("transactional producer %s replaced after: %s", self.transactional_id, error)

    def close(self) -> None:
        with self._lock:
            producer, self._producer = self._producer, None
        if producer is not None:
            producer.flush(self._timeout_s)
