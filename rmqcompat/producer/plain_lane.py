"""The asynchronous send of a plain message in one call: the producer's hot path.

Most sends carry a bytes body, no sharding key, delay, timer or user property, to a topic
the producer has already checked. :class:`PlainLane` starts such a send without the
general path's layers (``Submitter``, ``TopicGuard``, ``Pipeline.submit``), each a Python
call per send, and says ``None`` for any other send, which then takes the general path
unchanged. The compiled core has the same class: with it (and the delivery reports in
the core) the calling thread spent 4.65 us of CPU a send against 6.24 before
(``benchmarks/results/2026-11-28.md``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from confluent_kafka import KafkaException

from rmqcompat.clock import Clock
from rmqcompat.core import CORE
from rmqcompat.message import Message
from rmqcompat.message_id import MessageIds
from rmqcompat.producer.pending import PendingSend, ReportHandler, new_pending_send
from rmqcompat.producer.records import plain_headers_of
from rmqcompat.producer.send_future import OutcomeCallback

#: Handles an attempt librdkafka refused: (its client, the send, the ``BufferError`` or
#: ``KafkaException`` that ``produce`` raised).
RefusalHandler = Callable[[Any, PendingSend, BaseException], None]


class PlainLane:
    """Starts plain sends to known topics, each as ``Submitter.submit`` would start it.

    Args:
        ready: logical -> physical name of each topic sends may go to without asking the
            broker (the submitter adds a topic once it passed its check).
        max_size: the largest body sent here (a larger one takes the general path, which
            refuses it naming the limit).
        ids: the source of message ids.
        clock_ms: the wall clock stamped as ``BORN_TIMESTAMP``.
        in_flight: the pipeline's sends between submit and outcome; each send joins it.
        report: the pipeline's handler of delivery reports.
        refused: the pipeline's handler of an attempt librdkafka refused.

    ``producer`` is the pipeline's batch client (None until it starts; the pipeline sets it
    again when it replaces the client).
    """

    __slots__ = (
        "_clock_ms",
        "_ids",
        "_in_flight",
        "_max_size",
        "_ready",
        "_refused",
        "_report",
        "producer",
    )

    def __init__(
        self,
        ready: dict[str, str],
        max_size: int,
        ids: MessageIds,
        clock_ms: Clock,
        in_flight: set[PendingSend],
        report: ReportHandler,
        refused: RefusalHandler,
    ) -> None:
        self._ready = ready
        self._max_size = max_size
        self._ids = ids
        self._clock_ms = clock_ms
        self._in_flight = in_flight
        self._report = report
        self._refused = refused
        self.producer: Any = None

    def send(
        self, msg: Message, attempts: int, on_outcome: OutcomeCallback | None
    ) -> PendingSend | None:
        """Start sending ``msg`` with ``attempts`` attempts at most and no deadline, or
        return None (nothing done) when it is not a plain send to a known topic."""
        producer = self.producer
        body = msg.body
        if producer is None or type(body) is not bytes or len(body) > self._max_size:
            return None
        physical = self._ready.get(msg.topic)
        if physical is None:
            return None
        msg_id = self._ids.next_id()
        headers = plain_headers_of(msg, msg_id, self._clock_ms())
        if headers is None:
            return None
        pending = new_pending_send(
            physical, body, None, headers, msg_id, msg.topic, msg, attempts, None, on_outcome
        )
        self._in_flight.add(pending)
        try:
            pending.start_attempt(producer, self._report)
        except (BufferError, KafkaException) as exc:
            self._refused(producer, pending, exc)
        return pending


#: Makes the producer's lane: the compiled one where the core is built, else the class above.
new_plain_lane: type[PlainLane] = PlainLane if CORE is None else CORE.PlainLane
