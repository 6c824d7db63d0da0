"""One send in flight: the record, its retry budget, and (being its future) its outcome."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from rmqcompat.core import CORE
from rmqcompat.message import Message
from rmqcompat.producer.send_future import OutcomeCallback, SendFuture, send_ok
from rmqcompat.producer.send_result import SendResult
from rmqcompat.producer.spool import SpoolEntry
from rmqcompat.wire import OutgoingRecord

#: Receives a delivery report: (the send, librdkafka's error or None, the record).
ReportHandler = Callable[["PendingSend", Any, Any], None]

#: Headers of a send: a list (built records), or a dict of unique names (the plain path:
#: a dict of str to bytes is never tracked by the cyclic garbage collector).
SendHeaders = list[tuple[str, bytes | None]] | dict[str, bytes]


class PendingSend(SendFuture):
    """A send between ``submit`` and its single outcome, and the future that reports it.

    One object per send does three jobs: it is the :class:`SendFuture` that ``send_async``
    returns, librdkafka's delivery callback (``__call__``), and the record's parts kept
    flat (no ``OutgoingRecord`` unless it is spooled); each saves an allocation on every
    send. Once delivered it lets go of the body, headers and message (:meth:`release`), so
    a future the caller keeps does not keep them.

    Args:
        topic, value, key, headers, partition: the record to produce (same on every attempt).
        msg_id: the record's ``UNIQ_KEY``.
        logical_topic: the topic reported in ``SendResult.message_queue``.
        message: the caller's message, handed back inside a ``SendError``.
        max_attempts: 1 + the retries allowed.
        deadline: ``time.monotonic()`` after which no new attempt starts; None: no limit.
        on_outcome: called once with the ``SendResult`` or the exception.
        spool_entry: set when this send re-sends a spooled message (never re-spooled).
    """

    __slots__ = (
        "attempts",
        "deadline",
        "headers",
        "key",
        "logical_topic",
        "max_attempts",
        "message",
        "msg_id",
        "on_report",
        "partition",
        "producer",
        "spool_entry",
        "stored_offset",
        "stored_partition",
        "topic",
        "value",
    )

    def __init__(
        self,
        topic: str,
        value: bytes,
        key: bytes | None,
        headers: SendHeaders,
        msg_id: str,
        logical_topic: str,
        message: Message,
        max_attempts: int,
        deadline: float | None = None,
        on_outcome: OutcomeCallback | None = None,
        partition: int | None = None,
        spool_entry: SpoolEntry | None = None,
    ) -> None:
        SendFuture.__init__(self, on_outcome)
        self.topic = topic
        self.value: bytes | None = value
        self.key = key
        self.headers: SendHeaders | None = headers
        self.partition = partition
        self.msg_id = msg_id
        self.logical_topic = logical_topic
        self.message: Message | None = message
        self.max_attempts = max_attempts
        self.deadline = deadline
        self.spool_entry = spool_entry
        self.attempts = 0
        #: Where the broker stored the record (set by :meth:`set_stored`).
        self.stored_partition = self.stored_offset = -1
        #: The client of the current attempt and who handles its report (set per attempt).
        self.producer: Any = None
        self.on_report: ReportHandler | None = None

    def start_attempt(self, producer: Any, on_report: ReportHandler) -> None:
        """Start an attempt: count it, note its client and the handler of its delivery
        report, and hand the record to ``producer`` (a ``confluent_kafka.Producer``).

        Raises:
            BufferError, KafkaException: as ``producer.produce`` raises them (BufferError:
                its queue is full; the attempt is counted and noted all the same).
        """
        self.attempts += 1
        self.producer, self.on_report = producer, on_report
        self.produce_on(producer)

    def produce_on(self, producer: Any) -> None:
        """Hand the record to ``producer`` within the current attempt (not counted again:
        after ``produce`` raised BufferError, once librdkafka's queue has room).

        Raises:
            BufferError, KafkaException: as ``producer.produce`` raises them.
        """
        # All positional, as ``produce`` lists them: its keyword parsing costs 0.4 us a
        # send. The send is the ``callback`` (``on_delivery`` is its alias, None here) and
        # 0 is the timestamp's default (the time of producing).
        partition = -1 if self.partition is None else self.partition
        producer.produce(self.topic, self.value, self.key, partition, self, None, 0, self.headers)

    def record(self) -> OutgoingRecord:
        """The record this send produces (not after :meth:`release`)."""
        return record_of(self)

    def set_stored(self, partition: int, offset: int) -> None:
        """Complete as delivered: the broker stored the record at ``partition``/``offset``.

        As ``set_delivered``, with the delivery kept in two int slots instead of a tuple:
        one object less per send for the cyclic garbage collector to count and scan.

        Raises:
            InvalidStateError: the future already has its outcome.
        """
        self.stored_partition, self.stored_offset = partition, offset
        self._complete(None, None, None)

    def _acknowledged(self) -> SendResult:
        if self._delivery is not None:  # completed by set_delivered instead
            return super()._acknowledged()
        return send_ok(
            self.msg_id,
            self.logical_topic,
            self.topic,
            self.stored_partition,
            self.stored_offset,
            self.attempts,
        )

    def release(self) -> None:
        """Drop the body, headers, message and client once delivered (never re-produced)."""
        self.value = self.headers = self.message = self.producer = self.on_report = None

    def remaining_s(self, now: float | None = None) -> float | None:
        if self.deadline is None:
            return None
        return self.deadline - (time.monotonic() if now is None else now)

    def __call__(self, err: Any, msg: Any) -> None:
        # librdkafka's delivery report for the current attempt.
        if self.on_report is not None:
            self.on_report(self, err, msg)


def record_of(send: PendingSend) -> OutgoingRecord:
    """The record ``send`` produces (``record()`` of either implementation).

    Raises:
        ValueError: the send was delivered and released its record.
    """
    headers = send.headers
    if isinstance(headers, dict):
        headers = list(headers.items())
    if send.value is None or headers is None:
        raise ValueError(f"send {send.msg_id} was delivered and released its record")
    return OutgoingRecord(send.topic, send.value, send.key, headers, send.partition)


#: Makes every send's ``PendingSend``: the compiled one where the core is built (the cyclic
#: garbage collector does not walk it unless its send failed), else the class above.
new_pending_send: type[PendingSend] = PendingSend if CORE is None else CORE.PendingSend


def pending_of_record(
    record: OutgoingRecord, msg_id: str, logical_topic: str, message: Message, **kw: Any
) -> PendingSend:
    """A send of an existing record (a spooled or parked one)."""
    return new_pending_send(
        record.topic,
        record.value,
        record.key,
        record.headers,
        msg_id,
        logical_topic,
        message,
        partition=record.partition,
        **kw,
    )
