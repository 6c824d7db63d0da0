"""The lane of sends whose caller waits: produced at once, not after the batch linger.

librdkafka holds a record for ``linger.ms`` (5 ms by default here) so that records sent
close together share a request; only ``flush()`` lifts the linger, and only while it runs
(a ``flush(0)`` after a produce returns before the broker thread looks). A synchronous send
therefore goes through a second client of the same settings with ``linger.ms=0``, while
``send_async`` keeps batching on the first. Records that arrive while a request is in
flight still share the next one, so many threads sending synchronously still batch.

The waiting callers serve that client's delivery reports themselves (one at a time: the
*leader*; the others wait for their outcome or for the leader to leave), so a report reaches
its caller without a hand-over through the producer's poll thread.

Order: sends from one thread one after another keep their order (RocketMQ's orderly
send); a synchronous and an asynchronous send are not ordered with respect to each other.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from confluent_kafka import Producer

from rmqcompat.producer.pending import PendingSend
from rmqcompat.producer.send_future import SendFuture
from rmqcompat.producer_id import ask_for_producer_id

#: The settings that make a client send each record at once: those of every client whose
#: caller waits for the broker's answer (this lane, the transaction's half sender).
SEND_AT_ONCE: Mapping[str, Any] = {"linger.ms": 0}

#: The longest one ``poll`` of the leader blocks: a send retried by the scheduler thread
#: (after a backoff) or settled there (a timeout, a spool write) is seen within this.
_POLL_SLICE_S = 0.05


class ImmediateLane:
    """A linger-free client, created on the first synchronous send, and its report serving.

    Args:
        settings: the producer's librdkafka settings; :data:`SEND_AT_ONCE` replaces theirs.
        new_client: makes the client from those settings.
    """

    def __init__(
        self,
        settings: Mapping[str, Any],
        new_client: Callable[[dict[str, Any]], Any] = Producer,
    ) -> None:
        self._settings = {**settings, **SEND_AT_ONCE}
        self._new_client = new_client
        self._client: Producer | None = None
        self._create_lock = threading.Lock()
        self._leader = threading.Lock()
        # One event per waiting follower, set when the leader leaves (or its send ends).
        self._followers: set[threading.Event] = set()

    @property
    def started(self) -> Producer | None:
        """The client, or None before the first synchronous send."""
        return self._client

    def client(self) -> Producer:
        """The client (created on first use).

        Raises:
            KafkaException: librdkafka refused the settings.
        """
        client = self._client
        if client is None:
            with self._create_lock:
                client = self._client
                if client is None:
                    client = self._client = self._new_client(self._settings)
        return client

    def open(self) -> None:
        """Create the client now and have it ask for its producer id, so that the first
        synchronous send does not wait for the id (see :mod:`rmqcompat.producer_id`): at
        the first send the wait could outlast the send's own timeout."""
        ask_for_producer_id(self.client())

    def replace(self, broken: Producer) -> bool:
        """Drop ``broken`` if it is this lane's client (the next send makes a new one)."""
        with self._create_lock:
            if self._client is not broken:
                return False
            self._client = None
            return True

    def wait(self, pending: PendingSend) -> None:
        """Serve delivery reports until ``pending`` has its outcome or its deadline passed."""
        deadline = pending.deadline
        assert deadline is not None, "only a send with a deadline has a waiting caller"
        wake: threading.Event | None = None
        try:
            while not pending.done():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return
                if self._leader.acquire(blocking=False):
                    try:
                        self._serve(pending, deadline)
                    finally:
                        self._leave()
                    return
                if wake is None:
                    # Registered before looking again, so a leader leaving from now on
                    # wakes this caller: no report goes unserved while it sleeps.
                    wake = threading.Event()
                    self._followers.add(wake)
                    pending.add_done_callback(partial(_set_on_outcome, wake))
                    continue
                wake.wait(remaining)
                wake.clear()
        finally:
            if wake is not None:
                self._followers.discard(wake)
                # A hand-over may have come to this caller (and been taken for its own
                # outcome's wake-up): pass it on, or nobody serves the others' reports.
                self._hand_over()

    def serve_idle(self) -> None:
        """Serve reports nobody waits for (a send that timed out), unless a caller is."""
        client = self._client
        if client is None or not self._leader.acquire(blocking=False):
            return
        try:
            client.poll(0)
        finally:
            self._leave()

    def _serve(self, pending: PendingSend, deadline: float) -> None:
        while not pending.done():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            # after a replace, the client the retry will produce on
            self.client().poll(min(remaining, _POLL_SLICE_S))

    def _leave(self) -> None:
        # One follower takes over; waking them all would cost every waiting thread a
        # switch per report. A follower that leaves with its outcome passes it on.
        self._leader.release()
        self._hand_over()

    def _hand_over(self) -> None:
        followers = self._followers
        if followers and not self._leader.locked():
            try:
                next(iter(followers)).set()
            except (StopIteration, RuntimeError):  # emptied or changed meanwhile
                pass


def _set_on_outcome(wake: threading.Event, _send: SendFuture) -> None:
    wake.set()
