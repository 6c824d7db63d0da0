"""One send in flight: the record, its retry budget and the future that reports it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from rmqcompat.message import Message
from rmqcompat.producer.send_future import OutcomeCallback, SendFuture
from rmqcompat.producer.spool import SpoolEntry
from rmqcompat.wire import OutgoingRecord

#: Receives a delivery report: (the send, librdkafka's error or None, the record).
ReportHandler = Callable[["PendingSend", Any, Any], None]


class PendingSend:
    """A send between ``submit`` and its single outcome (result or exception).

    The record's parts are kept flat (no ``OutgoingRecord`` unless it is spooled) and the
    object is itself librdkafka's delivery callback: both save allocations on every send.

    Args:
        topic, value, key, headers, partition: the record to produce (same on every attempt).
        msg_id: the record's ``UNIQ_KEY``.
        logical_topic: the topic reported in ``SendResult.message_queue``.
        message: the caller's message, handed back inside a ``SendError``.
        max_attempts: 1 + the retries allowed.
        deadline: ``time.monotonic()`` after which no new attempt starts; None: no limit.
        spool_entry: set when this send re-sends a spooled message (never re-spooled).
        on_outcome: called once with the ``SendResult`` or the exception.
    """

    __slots__ = (
        "attempts",
        "deadline",
        "future",
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
        "topic",
        "value",
    )

    def __init__(
        self,
        topic: str,
        value: bytes,
        key: bytes | None,
        headers: list[tuple[str, bytes | None]],
        msg_id: str,
        logical_topic: str,
        message: Message,
        max_attempts: int,
        deadline: float | None = None,
        *,
        partition: int | None = None,
        spool_entry: SpoolEntry | None = None,
        on_outcome: OutcomeCallback | None = None,
    ) -> None:
        self.topic = topic
        self.value = value
        self.key = key
        self.headers = headers
        self.partition = partition
        self.msg_id = msg_id
        self.logical_topic = logical_topic
        self.message = message
        self.max_attempts = max_attempts
        self.deadline = deadline
        self.spool_entry = spool_entry
        self.attempts = 0
        self.future = SendFuture(on_outcome)
        #: The client of the current attempt and who handles its report (set per attempt).
        self.producer: Any = None
        self.on_report: ReportHandler | None = None

    @classmethod
    def of_record(
        cls, record: OutgoingRecord, msg_id: str, logical_topic: str, message: Message, **kw: Any
    ) -> PendingSend:
        """A send of an existing record (a spooled or parked one)."""
        return cls(
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

    def record(self) -> OutgoingRecord:
        return OutgoingRecord(self.topic, self.value, self.key, self.headers, self.partition)

    def remaining_s(self, now: float | None = None) -> float | None:
        if self.deadline is None:
            return None
        return self.deadline - (time.monotonic() if now is None else now)

    def __call__(self, err: Any, msg: Any) -> None:
        # librdkafka's delivery report for the current attempt.
        if self.on_report is not None:
            self.on_report(self, err, msg)
