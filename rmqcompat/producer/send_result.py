"""What a send returns: :class:`SendStatus` and :class:`SendResult`."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from rmqcompat.message import MessageQueue


class SendStatus(enum.Enum):
    """Outcome of a send that did not raise.

    ``SEND_OK``: the broker acknowledged the record (``acks=all``).
    ``SPOOLED``: rmqcompat's own status, not RocketMQ's: retries ran out on a retriable
    error and the message was written to the durable spool instead of being raised. It is
    *not delivered yet*; the spool re-sends it later with the same ``msg_id``.
    """

    SEND_OK = "SEND_OK"
    SPOOLED = "SPOOLED"


@dataclass(frozen=True)
class SendResult:
    """The result of one send.

    Attributes:
        send_status: ``SEND_OK`` or ``SPOOLED``.
        msg_id: the client-generated ``UNIQ_KEY`` (kept by spool re-sends).
        offset_msg_id: where the record is stored (topic@partition@offset); "" when spooled.
        message_queue: the logical topic and partition it landed on; None when spooled.
        queue_offset: the Kafka offset; -1 when spooled.
        spool_path: the spool file holding the message when spooled, else None.
        attempts: produce attempts this send made (more than 1 means it was retried, so a
            duplicate of it may exist if an earlier attempt was stored after timing out).
    """

    send_status: SendStatus
    msg_id: str
    offset_msg_id: str = ""
    message_queue: MessageQueue | None = None
    queue_offset: int = -1
    spool_path: str | None = None
    attempts: int = 1

    @property
    def delivered(self) -> bool:
        return self.send_status is SendStatus.SEND_OK
