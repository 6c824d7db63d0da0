"""Invisible time and receipt handles: which received message is held, until when.

A SimpleConsumer hands a message out with a *lease*: a receipt handle and a deadline
(now + invisible duration). The holder settles it by ``ack`` (done) or lets the deadline
pass (given back for another delivery). ``change`` replaces the lease by a new handle
and a deadline counted from now; the old handle is dead. A dead, unknown or expired
handle is refused with upstream's ``BadRequestException`` (40013,
``INVALID_RECEIPT_HANDLE``), as a RocketMQ 5 proxy refuses it.

Pure logic with an injected monotonic clock; the thread that delivered the message
waits in :meth:`Leases.outcome` for the settlement (see :mod:`rmqcompat.v5.simple`).
"""

from __future__ import annotations

import enum
import itertools
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from rmqcompat.v5.exceptions import INVALID_RECEIPT_HANDLE, BadRequestException

#: RocketMQ 5's bounds on an invisible duration (seconds): 10 s .. 12 h on the proxy; the
#: lower bound is the proxy's ``minInvisibleTimeMillsForRecv`` default. rmqcompat allows
#: 1 s so tests and short jobs need not wait 10 s.
MIN_INVISIBLE_S = 1
MAX_INVISIBLE_S = 12 * 3600


class Outcome(enum.Enum):
    ACKED = "acked"
    EXPIRED = "expired"


@dataclass
class _Lease:
    handle: str
    deadline: float
    owner: str
    outcome: Outcome | None = None
    # wakes the one thread waiting for this lease (a shared condition would wake every
    # holder's thread on each ack)
    wake: threading.Event = field(default_factory=threading.Event)


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

    def grant(self, invisible_s: float, owner: str = "") -> tuple[int, str]:
        """A new lease: its id (for :meth:`outcome`) and its receipt handle; ``owner``
        names the source, for :meth:`expire_all`."""
        with self._lock:
            lease_id = next(self._ids)
            handle = self._new_handle(lease_id)
            self._leases[lease_id] = _Lease(handle, self._clock() + invisible_s, owner)
            self._by_handle[handle] = lease_id
            return lease_id, handle

    def ack(self, handle: str) -> int:
        """Settle the lease of ``handle``; returns its id. Raises BadRequestException (40013)."""
        with self._lock:
            lease = self._live(handle)
            lease.outcome = Outcome.ACKED
            lease_id = self._by_handle.pop(handle)
        lease.wake.set()
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
        lease.wake.set()
        return lease.handle

    def outcome(self, lease_id: int) -> Outcome:
        """Block until the lease is acked or past its deadline; forget it."""
        with self._lock:
            lease = self._leases[lease_id]
        while True:
            with self._lock:
                left = lease.deadline - self._clock()
                if lease.outcome is None and left <= 0:
                    lease.outcome = Outcome.EXPIRED
                    self._by_handle.pop(lease.handle, None)
                if lease.outcome is not None:
                    del self._leases[lease_id]
                    return lease.outcome
                lease.wake.clear()
            lease.wake.wait(left)

    def expire_all(self, owner: str | None = None) -> int:
        """Make every held lease (of ``owner``, or all) expire now; returns how many."""
        with self._lock:
            live = [
                lease
                for lease in self._leases.values()
                if lease.outcome is None and owner in (None, lease.owner)
            ]
            return self._expire(live)

    def expire(self, lease_ids: list[int]) -> int:
        """Make the held leases of ``lease_ids`` expire now; returns how many."""
        with self._lock:
            chosen = (self._leases.get(lease_id) for lease_id in lease_ids)
            return self._expire([lease for lease in chosen if lease and lease.outcome is None])

    def _expire(self, live: list[_Lease]) -> int:
        for lease in live:
            lease.deadline = self._clock()
            lease.wake.set()
        return len(live)

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
