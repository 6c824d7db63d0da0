"""What a delivery report does to its send: the producer's other hot path.

librdkafka reports each record's delivery on the thread that polls, which holds the GIL
for it: every microsecond spent here is one the sending thread waits for. The compiled
core has the same class (``rmqcompat._core.DeliveryReports``).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from concurrent.futures import InvalidStateError
from typing import Any

from rmqcompat.clock import Clock
from rmqcompat.core import CORE
from rmqcompat.producer.pending import PendingSend
from rmqcompat.producer.spool import SpoolEntry
from rmqcompat.trace import bulk

log = logging.getLogger(__name__)

#: Fails an attempt: (the send, librdkafka's error, the client of the attempt).
FailureHandler = Callable[[PendingSend, Any, Any], None]


class DeliveryReports:
    """The pipeline's handler of delivery reports (``PendingSend.on_report``).

    A failed attempt goes to ``failed``. A stored record completes its send (a re-sent
    spooled message is first deleted from the spool by ``unspool``), which then lets go of
    its record, is noted for the PUBLISH trace, and leaves ``in_flight``. A record stored
    after its send timed out changes nothing: the timeout stands.

    Args:
        failed: the pipeline's handling of a failed attempt (retry, spool or fail).
        unspool: deletes the spool entry of a re-sent message that was stored.
        in_flight: the pipeline's sends between submit and outcome.
        none_in_flight: called each time a send leaves ``in_flight`` empty.
        acknowledged: where a stored send is noted for tracing, ``(at_ms, message, msg_id,
            physical topic, None, headers written)`` (None: sends are not traced).
        trace_clock: the clock of the trace events.
        trace_run: the most sends noted before ``trace_noted`` is called.
        trace_noted: hands the noted sends to the trace (see ``Pipeline._TRACE_RUN``).
    """

    __slots__ = (
        "_acknowledged",
        "_failed",
        "_in_flight",
        "_none_in_flight",
        "_trace_clock",
        "_trace_noted",
        "_trace_run",
        "_unspool",
    )

    def __init__(
        self,
        failed: FailureHandler,
        unspool: Callable[[SpoolEntry], None],
        in_flight: set[PendingSend],
        none_in_flight: Callable[[], None],
        acknowledged: deque[bulk.Acknowledged] | None,
        trace_clock: Clock,
        trace_run: int,
        trace_noted: Callable[[], None],
    ) -> None:
        self._failed = failed
        self._unspool = unspool
        self._in_flight = in_flight
        self._none_in_flight = none_in_flight
        self._acknowledged = acknowledged
        self._trace_clock = trace_clock
        self._trace_run = trace_run
        self._trace_noted = trace_noted

    def __call__(self, pending: PendingSend, err: Any, msg: Any) -> None:
        if err is not None:
            self._failed(pending, err, pending.producer)
            return
        if pending.spool_entry is not None:
            self._unspool(pending.spool_entry)
        message, headers = pending.message, pending.headers
        try:
            # the SendResult is built lazily, when (if ever) someone reads it
            pending.set_stored(msg.partition(), msg.offset())
        except InvalidStateError:
            delivered_late(pending)
            return
        pending.release()  # the caller may keep the future: not the body with it
        acknowledged = self._acknowledged
        if acknowledged is not None and message is not None:
            written = () if headers is None or isinstance(headers, dict) else headers
            at_ms = self._trace_clock()
            acknowledged.append((at_ms, message, pending.msg_id, pending.topic, None, written))
            if len(acknowledged) >= self._trace_run:
                self._trace_noted()
        self.leave(pending)

    def leave(self, pending: PendingSend) -> None:
        """``pending`` has its outcome: it leaves ``in_flight`` (``none_in_flight`` is
        called when that empties it). Every way a send ends comes through here."""
        in_flight = self._in_flight
        in_flight.discard(pending)
        if not in_flight:
            self._none_in_flight()


def delivered_late(pending: PendingSend) -> None:
    """Note a record stored after its send timed out: the timeout outcome stands (and was
    settled)."""
    log.info("message %s was delivered after its send timed out", pending.msg_id)


#: Makes the pipeline's handler: the compiled one where the core is built, else the class
#: above.
new_delivery_reports: type[DeliveryReports] = (
    DeliveryReports if CORE is None else CORE.DeliveryReports
)
