"""ackIndex processing (SEMANTICS section 2): which messages of a batch succeeded.

Pure: no I/O, no clock. RocketMQ's rule, plus the opt-in per-message failure described
on :class:`~rmqcompat.consumer.listener.ConsumeConcurrentlyContext`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rmqcompat.consumer.listener import ConsumeConcurrentlyStatus

_SUCCESS = ConsumeConcurrentlyStatus.CONSUME_SUCCESS


@dataclass(frozen=True)
class BatchOutcome:
    """Indexes of a batch that succeeded and failed (each sorted); ``ok`` + ``failed`` = all."""

    ok: tuple[int, ...]
    failed: tuple[int, ...]


def effective_ack_index(status: ConsumeConcurrentlyStatus, ack_index: int, size: int) -> int:
    """RocketMQ: SUCCESS clamps ack_index to ``size - 1``; RECONSUME_LATER makes it -1."""
    if status is ConsumeConcurrentlyStatus.RECONSUME_LATER:
        return -1
    return min(ack_index, size - 1)


def all_succeeded(
    status: ConsumeConcurrentlyStatus,
    ack_index: int,
    size: int,
    failed_indexes: Iterable[int] | None,
) -> bool:
    """True only if :func:`split_batch` fails nothing: the settle fast path asks this
    without building the split (it runs once per batch). Conservative: with any
    ``failed_indexes`` it says False and leaves the decision to :func:`split_batch`."""
    return status is _SUCCESS and ack_index >= size - 1 and not failed_indexes


def split_batch(
    status: ConsumeConcurrentlyStatus,
    ack_index: int,
    size: int,
    failed_indexes: Iterable[int] | None = (),
) -> BatchOutcome:
    """Split a batch of ``size`` messages into succeeded and failed indexes.

    Without ``failed_indexes`` this is RocketMQ's rule. With them, those indexes fail too,
    and a RECONSUME_LATER fails only them (per-message failure for batch listeners).
    Indexes outside the batch are ignored.
    """
    if not failed_indexes:  # the common path, kept cheap: it runs once per batch
        last_ok = effective_ack_index(status, ack_index, size)
        return BatchOutcome(tuple(range(last_ok + 1)), tuple(range(max(last_ok + 1, 0), size)))
    marked = {i for i in failed_indexes if 0 <= i < size}
    if marked and status is ConsumeConcurrentlyStatus.RECONSUME_LATER:
        last_ok = size - 1
    else:
        last_ok = effective_ack_index(status, ack_index, size)
    failed = {i for i in range(size) if i > last_ok} | marked
    ok = tuple(i for i in range(size) if i not in failed)
    return BatchOutcome(ok=ok, failed=tuple(sorted(failed)))
