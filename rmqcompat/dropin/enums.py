"""The drop-in's enums and ``SendResult``: upstream's names and integer values."""

from __future__ import annotations

from collections import namedtuple
from enum import IntEnum

#: What ``send_sync`` and friends return: ``(status, msg_id, offset)``.
SendResult = namedtuple("SendResult", ["status", "msg_id", "offset"])


class SendStatus(IntEnum):
    """Only ``OK`` occurs: every send waits for ``acks=all``, so a record is on every
    in-sync replica or the send raises; there is no disk-flush or slave status on Kafka."""

    OK = 0
    FLUSH_DISK_TIMEOUT = 1
    FLUSH_SLAVE_TIMEOUT = 2
    SLAVE_NOT_AVAILABLE = 3


class TransactionStatus(IntEnum):
    COMMIT = 0
    ROLLBACK = 1
    UNKNOWN = 2


class ConsumeStatus(IntEnum):
    CONSUME_SUCCESS = 0
    RECONSUME_LATER = 1


class MessageModel(IntEnum):
    BROADCASTING = 0
    CLUSTERING = 1


class TraceModel(IntEnum):
    OPEN = 0
    CLOSE = 1


def as_status(enum: type[IntEnum], value: object) -> IntEnum | None:
    """``value`` as a member of ``enum``: a member, or its integer value as upstream's C
    callback takes it (never a bool); None for anything else."""
    if isinstance(value, enum):
        return value
    if type(value) is int:
        try:
            return enum(value)
        except ValueError:
            return None
    return None
