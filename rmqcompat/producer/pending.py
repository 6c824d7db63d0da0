"""One send in flight: the record, its retry budget and the future that reports it."""

from __future__ import annotations

import time
from concurrent.futures import Future
from dataclasses import dataclass, field

from rmqcompat.message import Message
from rmqcompat.producer.records import PreparedRecord
from rmqcompat.producer.send_result import SendResult
from rmqcompat.producer.spool import SpoolEntry


@dataclass(eq=False)
class PendingSend:
    """A send between ``submit`` and its single outcome (result or exception).

    Args:
        prepared: the record to produce (the same record on every attempt).
        logical_topic: the topic reported in ``SendResult.message_queue``.
        message: the caller's message, handed back inside a ``SendError``.
        max_attempts: 1 + the retries allowed.
        deadline: ``time.monotonic()`` after which no new attempt starts; None: no limit.
        spool_entry: set when this send re-sends a spooled message (never re-spooled).
    """

    prepared: PreparedRecord
    logical_topic: str
    message: Message
    max_attempts: int
    deadline: float | None = None
    spool_entry: SpoolEntry | None = None
    attempts: int = 0
    future: Future[SendResult] = field(default_factory=Future)

    def remaining_s(self, now: float | None = None) -> float | None:
        if self.deadline is None:
            return None
        return self.deadline - (time.monotonic() if now is None else now)
