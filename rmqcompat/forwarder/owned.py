"""What the forward loop keeps of one partition it owns, in one object per partition."""

from __future__ import annotations

from dataclasses import dataclass

from rmqcompat.forwarder.delivery import Lane
from rmqcompat.forwarder.holding import HeldRecords


@dataclass(slots=True)
class OwnedPartition:
    """One tenure of an assigned level-topic partition (a re-assignment makes a new one).

    Attributes:
        lane: its produces and their offsets (``lane.state``: read, forwarded, committable).
        held: the records read and not yet forwarded, the head first.
        delay_ms: the delay of its level topic.
        paused: fetching is paused because ``held`` is full.
    """

    lane: Lane
    held: HeldRecords
    delay_ms: int
    paused: bool = False
