"""The hand-over between a consumer's fetched messages and ``SimpleConsumer.receive``.

Each fetched message waits here in a :class:`Slot` until ``receive`` takes it (granting
its lease) or its source closes (then it is given back untaken). Taking and abandoning
happen under one lock, so a slot is either received with a lease or given back, never
both. A slot tells its holder (:mod:`rmqcompat.v5.held_pool`) through ``notify`` when it
is taken or given back, and when its lease is acked or made to expire now.
"""

from __future__ import annotations

import enum
import threading
from collections import deque
from collections.abc import Callable

from rmqcompat.message import MessageExt
from rmqcompat.v5.leases import Leases
from rmqcompat.wire import Key


class SlotState(enum.Enum):
    WAITING = "waiting"
    TAKEN = "taken"
    ABANDONED = "abandoned"


class Slot:
    """One fetched message of ``owner`` (a source's name), waiting for ``receive``;
    ``key`` is the Kafka partition that carried it; ``notify(slot)`` is called on every
    change (any thread, possibly under the hand-over's lock: it must only queue)."""

    def __init__(
        self, message: MessageExt, owner: str, key: Key, notify: Callable[[Slot], None]
    ) -> None:
        self.message = message
        self.owner = owner
        self.key = key
        self.state = SlotState.WAITING
        self.lease_id = -1
        self.handle = ""
        self._notify = notify

    def settle(self, state: SlotState) -> None:
        self.state = state
        self._notify(self)

    def lease_ended(self, _lease_id: int) -> None:
        self._notify(self)


class Handoff:
    """Slots in arrival order; ``take`` leases them out, ``abandon`` gives them back."""

    def __init__(self, leases: Leases) -> None:
        self.leases = leases
        self._cond = threading.Condition()
        self._slots: deque[Slot] = deque()
        self._closed: set[str] = set()

    def offer(self, slot: Slot) -> None:
        with self._cond:
            if slot.owner in self._closed:
                slot.settle(SlotState.ABANDONED)
                return
            self._slots.append(slot)
            self._cond.notify()

    def take(self, max_count: int, wait_s: float, invisible_s: float) -> list[Slot]:
        """Up to ``max_count`` slots, waiting up to ``wait_s`` for the first; each is
        leased for ``invisible_s`` seconds from now."""
        with self._cond:
            self._cond.wait_for(lambda: bool(self._slots), wait_s)
            taken: list[Slot] = []
            while self._slots and len(taken) < max_count:
                slot = self._slots.popleft()
                slot.lease_id, slot.handle = self.leases.grant(
                    invisible_s, slot.owner, slot.lease_ended
                )
                slot.settle(SlotState.TAKEN)
                taken.append(slot)
            return taken

    def abandon(self, owner: str) -> None:
        """Close ``owner``: its waiting slots are given back, its leases expire now."""
        with self._cond:
            self._closed.add(owner)
            keep: deque[Slot] = deque()
            for slot in self._slots:
                if slot.owner == owner:
                    slot.settle(SlotState.ABANDONED)
                else:
                    keep.append(slot)
            self._slots = keep
            self.leases.expire_all(owner)

    def reopen(self, owner: str) -> None:
        with self._cond:
            self._closed.discard(owner)

    def waiting(self) -> int:
        with self._cond:
            return len(self._slots)
