"""``SendReceipt`` and ``TransactionResolution``: what a 5.x producer hands back."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from rmqcompat.message import MessageQueue


class TransactionResolution(enum.IntEnum):
    """``apache.rocketmq.v2.TransactionResolution`` codes."""

    TRANSACTION_RESOLUTION_UNSPECIFIED = 0
    COMMIT = 1
    ROLLBACK = 2


@dataclass(frozen=True)
class SendReceipt:
    """Where a message was stored: ``message_queue`` is the logical topic and partition,
    ``offset`` the Kafka offset. ``transaction_id`` is set for a half message,
    ``recall_handle`` for a DELAY message (pass it to ``Producer.recall_message``)."""

    message_id: str
    transaction_id: str | None
    message_queue: MessageQueue | None
    offset: int
    recall_handle: str | None = None

    def __str__(self) -> str:
        return f"message_id:{self.message_id}"
