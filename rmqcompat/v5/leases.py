"""Invisible time and receipt handles: which received message is held, until when.

A SimpleConsumer hands a message out with a *lease*: a receipt handle and a deadline
(now + invisible duration). The holder settles it by ``ack`` (done) or lets the deadline
pass (given back for another delivery). ``change`` replaces the lease by a new handle
and a deadline counted from now; the old handle is dead. A dead, unknown or expired
handle is refused with upstream's ``BadRequestException`` (40013,
``INVALID_RECEIPT_HANDLE``), as a RocketMQ 5 proxy refuses it.

Pure logic with an injected monotonic clock. A lease's ``on_end`` callback is called
when it is acked or made to expire now; its holder asks :meth:`Leases.check` when that
happens or its deadline comes (see :mod:`rmqcompat.v5.held_pool`).
"""

from __future__ import annotations

import enum
import itertools
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from rmqcompat.v5.exceptions import INVALID_RECEIPT_HANDLE, BadRequestException

#: RocketMQ 5's bounds on an invisible duration (seconds): 10 s .. 12 h on the proxy; the
#: lower bound is the proxy's ``minInvisibleTimeMillsForRecv`` default. rmqcompat allows
#: 1 s so tests and short jobs need not wait 10 s.
MIN_INVISIBLE_S = 1
MAX_INVISIBLE_S = 12 * 3600


class Outcome(enum.Enum):
    ACKED = "acked"
    EXPIRED = "expired"


def _nothing(_lease_id: int) -> None:
    return None


@dataclass
class _Lease:
    handle: str
    deadline: float
    owner: str
    on_end: Callable[[int], None]
    outcome: Outcome | None = None


def invalid_handle(handle: object) -> BadRequestException:
    return BadRequestException(
        f"INVALID_RECEIPT_HANDLE: receipt handle {handle!r} is unknown, replaced or expired",
        INVALID_RECEIPT_HANDLE,
    )


class Leases:
    """Thread-safe table of held messages, keyed by a per-delivery lease id."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._by_handle: dict[str, int] = {}
        self._leases: dict[int, _Lease] = {}
        self._ids = itertools.count()
        self._prefix = uuid.uuid4().hex[:12]

    def grant(
        self,
        invisible_s: float,
        owner: str = "",
        on_end: Callable[[int], None] = _nothing,
    ) -> tuple[int, str]:
        """A new lease: its id (for :meth:`check`) and its receipt handle; ``owner``
        names the source, for :meth:`expire_all`; ``on_end(lease_id)`` is called (on the
        caller's thread) when it is acked or made to expire now."""
        with self._lock:
            lease_id = next(self._ids)
            handle = self._new_handle(lease_id)
            self._leases[lease_id] = _Lease(handle, self._clock() + invisible_s, owner, on_end)
            self._by_handle[handle] = lease_id
            return lease_id, handle

    def ack(self, handle: str) -> int:
        """Settle the lease of ``handle``; returns its id. Raises BadRequestException (40013)."""
        with self._lock:
            lease = self._live(handle)
            lease.outcome = Outcome.ACKED
            lease_id = self._by_handle.pop(handle)
        lease.on_end(lease_id)
        return lease_id

    def change(self, handle: str, invisible_s: float) -> str:
        """A new handle, the deadline ``invisible_s`` from now; ``handle`` is dead.

        Raises BadRequestException (40013)."""
        with self._lock:
            lease = self._live(handle)
            lease_id = self._by_handle.pop(handle)
            lease.handle = self._new_handle(lease_id)
            lease.deadline = self._clock() + invisible_s
            self._by_handle[lease.handle] = lease_id
        return lease.handle

    def check(self, lease_id: int) -> Outcome | float:
        """The lease's outcome if it is acked or past its deadline (then it is forgotten),
        else its deadline (on the clock)."""
        with self._lock:
            lease = self._leases[lease_id]
            if lease.outcome is None and lease.deadline <= self._clock():
                lease.outcome = Outcome.EXPIRED
                self._by_handle.pop(lease.handle, None)
            if lease.outcome is None:
                return lease.deadline
            del self._leases[lease_id]
            return lease.outcome

    def expire_all(self, owner: str | None = None) -> int:
        """Make every held lease (of ``owner``, or all) expire now; returns how many."""
        with self._lock:
            return self._expire(
                [
                    lease_id
                    for lease_id, lease in self._leases.items()
                    if lease.outcome is None and owner in (None, lease.owner)
                ]
            )

    def expire(self, lease_ids: list[int]) -> int:
        """Make the held leases of ``lease_ids`` expire now; returns how many."""
        with self._lock:
            return self._expire([i for i in lease_ids if i in self._leases])

    def _expire(self, lease_ids: list[int]) -> int:
        # under the lock: on_end only queues the lease id for its holder (held_pool)
        count = 0
        for lease_id in lease_ids:
            lease = self._leases[lease_id]
            if lease.outcome is None:
                lease.deadline = self._clock()
                lease.on_end(lease_id)
                count += 1
        return count

    def held(self) -> int:
        with self._lock:
            return sum(1 for lease in self._leases.values() if lease.outcome is None)

    def _live(self, handle: str) -> _Lease:
        lease_id = self._by_handle.get(handle) if isinstance(handle, str) else None
        lease = self._leases.get(lease_id) if lease_id is not None else None
        if lease is None or lease.outcome is not None or lease.deadline <= self._clock():
            raise invalid_handle(handle)
        return lease

    def _new_handle(self, lease_id: int) -> str:
        return f"{self._prefix}-{lease_id}-{uuid.uuid4().hex[:8]}"
