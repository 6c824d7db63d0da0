"""Where a SimpleConsumer's fetched messages wait for ``receive`` and their lease's end.

It stands in for the core's listener threads (:class:`~rmqcompat.consumer.dispatch.
WorkerPool`, same methods): a message the engine submits is parked in the
:class:`~rmqcompat.v5.handoff.Handoff` at once, and its batch is finished (and settled by
the engine as if a listener had returned) when its lease ends: acked ->
CONSUME_SUCCESS; past its deadline -> RECONSUME_LATER on the shortest delay level (the
retry path); given back untaken (the topic closes) -> the same. An expired FIFO message
is offered again in place (its group's successors wait behind it, :mod:`.lanes`) until
its attempts are used up, then dead-lettered; a message whose attempts a member that
died used up (:mod:`.attempts`) is dead-lettered at once.

No thread per message: ``receive``, ``ack`` and the hand-over only queue the slot that
changed; the engine's poll thread does the rest in :meth:`HeldPool.results`, where a
heap of lease deadlines finds the expired ones. At most ``capacity`` messages are parked
or held; the rest wait in submission order (:meth:`backlog`), which the engine's flow
control sees.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections import deque
from collections.abc import Callable, Sequence

from rmqcompat.consumer.dispatch import ConsumeBatch
from rmqcompat.consumer.listener import ConsumeConcurrentlyStatus, new_consume_context
from rmqcompat.retry.decision import DLQ_NOW
from rmqcompat.v5.attempts import Held
from rmqcompat.v5.handoff import Handoff, Slot, SlotState
from rmqcompat.v5.leases import Outcome
from rmqcompat.v5.message import MESSAGE_GROUP

_SUCCESS = ConsumeConcurrentlyStatus.CONSUME_SUCCESS
_LATER = ConsumeConcurrentlyStatus.RECONSUME_LATER


class HeldPool:
    """The core's worker-pool methods over a :class:`Handoff` (see the module doc)."""

    def __init__(
        self,
        handoff: Handoff,
        held: Held,
        owner: str,
        give_back_level: int,
        max_attempts: int,
        capacity: int,
        clock: Callable[[], float],
    ) -> None:
        self._handoff = handoff
        self._held = held
        self._owner = owner
        self._give_back_level = give_back_level
        self._max_attempts = max_attempts
        self._capacity = capacity
        self._clock = clock
        self._pending: deque[ConsumeBatch] = deque()  # submitted, not parked yet
        self._batches: dict[Slot, ConsumeBatch] = {}  # parked or held
        self._changed: deque[Slot] = deque()  # appended on any thread
        self._ready = threading.Event()
        self._deadlines: list[tuple[float, int, Slot]] = []
        self._seq = itertools.count()
        self._done: list[ConsumeBatch] = []

    def submit(self, batches: Sequence[ConsumeBatch]) -> None:
        self._pending.extend(batches)
        self._park()

    def backlog(self) -> int:
        return len(self._pending)

    def wait(self, timeout: float, backlog_below: int | None = None) -> bool:
        """Block up to ``timeout`` (or the next lease deadline) until a slot changed;
        with ``backlog_below``, True once fewer than that many wait unparked."""
        if not self._changed:
            self._ready.clear()
            if not self._changed:  # re-checked after clearing: a change meanwhile is seen
                left = self._deadlines[0][0] - self._clock() if self._deadlines else timeout
                self._ready.wait(max(0.0, min(timeout, left)))
        if backlog_below is not None:
            self._settle_changes()
            return len(self._pending) < backlog_below
        return bool(self._changed) or bool(self._done)

    def results(self) -> list[ConsumeBatch]:
        """The batches whose lease ended (or that were given back), oldest first."""
        self._settle_changes()
        done, self._done = self._done, []
        return done

    def shutdown(self) -> None:
        """Submitted but never parked batches are dropped (their partitions close)."""
        self._pending.clear()

    # -- poll thread -----------------------------------------------------------------

    def _park(self) -> None:
        while self._pending and len(self._batches) < self._capacity:
            batch = self._pending.popleft()
            if batch.pq.dropped:  # revoked while it waited: its new owner reads it again
                self._done.append(batch)
                continue
            batch.started_at = self._clock()
            batch.context = new_consume_context(batch.queue)
            if batch.messages[0].reconsume_times >= self._max_attempts:
                self._finish(batch, _LATER, DLQ_NOW)
                continue
            self._offer(batch)

    def _offer(self, batch: ConsumeBatch) -> None:
        slot = Slot(batch.messages[0], self._owner, batch.key, self._on_change)
        self._batches[slot] = batch
        self._handoff.offer(slot)

    def _on_change(self, slot: Slot) -> None:  # any thread
        self._changed.append(slot)
        self._ready.set()

    def _settle_changes(self) -> None:
        changed = self._changed
        while changed:
            self._step(changed.popleft())
        now, deadlines = self._clock(), self._deadlines
        while deadlines and deadlines[0][0] <= now:
            self._step(heapq.heappop(deadlines)[2])
        self._park()

    def _step(self, slot: Slot) -> None:
        batch = self._batches.get(slot)
        if batch is None or slot.state is SlotState.WAITING:  # finished, or not taken yet
            return
        if slot.state is SlotState.ABANDONED:
            del self._batches[slot]
            self._finish(batch, _LATER, self._give_back_level)
            return
        outcome = self._handoff.leases.check(slot.lease_id)
        if not isinstance(outcome, Outcome):  # held: come back at its (new) deadline
            heapq.heappush(self._deadlines, (outcome, next(self._seq), slot))
            return
        del self._batches[slot]
        self._held.settle(slot.lease_id)
        ext = slot.message
        if outcome is Outcome.ACKED:
            self._finish(batch, _SUCCESS, 0)
        elif MESSAGE_GROUP not in ext.properties:
            self._finish(batch, _LATER, self._give_back_level)
        elif ext.reconsume_times + 1 >= self._max_attempts:
            self._finish(batch, _LATER, DLQ_NOW)
        else:  # FIFO: offered again in place, its group waits behind it
            ext.reconsume_times += 1
            self._offer(batch)

    def _finish(self, batch: ConsumeBatch, status: ConsumeConcurrentlyStatus, level: int) -> None:
        context = batch.context
        if context is not None and status is _LATER:
            context.delay_level_when_next_consume = level
        batch.status = status
        batch.finished_at = self._clock()
        self._done.append(batch)
