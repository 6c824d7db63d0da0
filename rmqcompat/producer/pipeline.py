"""The I/O engine behind the producer: one confluent-kafka Producer, its poll thread,
application-level retries with backoff, spooling of final retriable failures.

librdkafka already retries busy/throttled/leader-change errors internally (idempotently,
so without duplicates) until ``message.timeout.ms``; the retries here cover what it gives
up on: a full local queue, timeouts and other retriable delivery errors.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import InvalidStateError
from functools import partial
from typing import Any

import tenacity
from confluent_kafka import KafkaError, KafkaException, Producer

from rmqcompat.clock import Clock
from rmqcompat.core import BUG_ERRORS
from rmqcompat.errors import ClientStateError
from rmqcompat.message_id import MessageIds
from rmqcompat.producer.deliveries import DeliveryReports, new_delivery_reports
from rmqcompat.producer.failures import (
    Backoff,
    as_kafka_error,
    is_retriable,
    needs_new_client,
    send_error,
    timed_out,
)
from rmqcompat.producer.immediate import ImmediateLane
from rmqcompat.producer.pending import PendingSend
from rmqcompat.producer.plain_lane import PlainLane, new_plain_lane
from rmqcompat.producer.scheduler import Scheduler
from rmqcompat.producer.send_result import SendResult, SendStatus
from rmqcompat.producer.spool import Spool, SpoolEntry
from rmqcompat.producer_id import ask_for_producer_id
from rmqcompat.trace import Tracer, bulk, hooks

log = logging.getLogger(__name__)

_POLL_S = 0.05
#: The poll loop's wait once the pipeline is closing: it ends at most this long after the
#: last outcome, where a full wait made every ``shutdown`` 50 ms longer than its sends.
_CLOSING_POLL_S = 0.002
#: Sends acknowledged within one poll are traced in runs of at most this many: one poll
#: may serve a whole burst's delivery reports, whose messages the trace would otherwise
#: keep alive (and the collector walk) until the poll returns.
_TRACE_RUN = 1024


class Pipeline:
    """Produces :class:`PendingSend` records until each has exactly one outcome.

    Outcomes are set on the pending send's future from the poll thread (success) or the
    scheduler thread (failures, spooling); user callbacks chained to the future run there.
    A send with a deadline (its caller waits for it) goes through the :class:`ImmediateLane`
    instead: produced without the linger, its success set by a waiting caller's thread.
    """

    def __init__(
        self,
        settings: Mapping[str, Any],
        *,
        queue_wait_s: float,
        backoff: Backoff,
        spool: Spool | None,
        clock_ms: Callable[[], int],
        tracer: Tracer | None = None,
    ) -> None:
        self._settings = dict(settings)
        self._tracer = tracer or Tracer.disabled()
        self._trace_clock = self._tracer.events.clock
        #: Sends acknowledged since the last trace hand-off (delivery reports of every
        #: thread that polls): traced together after each poll, one append for all.
        self._acknowledged: deque[bulk.Acknowledged] = deque()
        self._queue_wait_s = queue_wait_s
        self._backoff = backoff
        self._spool = spool
        self._clock_ms = clock_ms
        self._producer: Producer | None = None
        self._immediate = ImmediateLane(self._settings)
        # Replaced clients, polled until their last delivery report arrived.
        self._retired: list[Producer] = []
        self._scheduler = Scheduler("rmqcompat-producer-retry")
        self._closed = threading.Event()
        self._poller = threading.Thread(target=self._poll, name="rmqcompat-producer-poll")
        self._poller.daemon = True
        # Sends between submit and outcome. A set, not a counter under a lock: add and
        # discard are each one atomic step (no lock round twice per send), and the drain
        # event is only signalled while draining (see drain and _settle for the order).
        self._in_flight: set[PendingSend] = set()
        self._draining = False
        self._drained = threading.Event()
        # One handler shared by every send, instead of a closure per attempt.
        self._report: DeliveryReports = new_delivery_reports(
            self._failed,
            self._unspool,
            self._in_flight,
            self._none_in_flight,
            self._acknowledged if self._tracer.enabled else None,
            self._trace_clock,
            _TRACE_RUN,
            self._trace_acknowledged,
        )
        self._lane: PlainLane | None = None

    @property
    def producer(self) -> Producer:
        if self._producer is None:
            raise ClientStateError("the producer is not started")
        return self._producer

    def start(self) -> None:
        """Create the librdkafka producer (no network I/O yet) and the two threads.

        Raises:
            KafkaException: librdkafka refused the settings.
        """
        self._producer = Producer(self._settings)
        if self._lane is not None:
            self._lane.producer = self._producer
        self._poller.start()
        self._scheduler.start()

    def connect(self) -> None:
        """Have the batch client and the synchronous sends' client (created for it) ask
        for their producer ids now rather than at their first sends."""
        ask_for_producer_id(self.producer)
        if not self._closed.is_set():  # no client made for a pipeline closed meanwhile
            self._immediate.open()

    def connect_in_background(self) -> None:
        """:meth:`connect` on a thread of its own, for a start that must not wait for a
        broker: where one answers, the first sends find their ids (without it a first
        send waited librdkafka's 0.5 s id timer); where none does, the asks give up
        after about a second each and librdkafka's timer goes on asking."""
        threading.Thread(
            target=self.connect, name="rmqcompat-producer-connect", daemon=True
        ).start()

    def plain_lane(
        self, ready: dict[str, str], max_size: int, ids: MessageIds, clock_ms: Clock
    ) -> PlainLane:
        """The lane that starts plain sends in one call (see :class:`PlainLane` for the
        arguments), on this pipeline's batch client, as :meth:`submit` starts them."""
        lane = new_plain_lane(
            ready, max_size, ids, clock_ms, self._in_flight, self._report, self._refused
        )
        lane.producer = self._producer
        self._lane = lane
        return lane

    def submit(self, pending: PendingSend, error: KafkaError | None = None) -> None:
        """Start ``pending`` (or fail it with ``error`` found before producing).

        May block up to the send's remaining time while librdkafka's queue is full.
        """
        self._in_flight.add(pending)
        if error is None:
            self._attempt(pending)
        else:
            pending.attempts = 0
            self._failed(pending, error)

    def wait(self, pending: PendingSend) -> SendResult:
        """The outcome of a send with a deadline, at the latest just after that deadline.

        If no delivery report came by then, the send ends as a retriable timeout (spooled
        when a spool is set) on the retry thread, after any job queued there before it.
        A record still queued in librdkafka then may yet be delivered (a duplicate if the
        caller sends it again, as after any timeout); its late report is ignored.

        Raises:
            SendError: the send failed.
        """
        self._immediate.wait(pending)
        remaining = pending.remaining_s()
        try:
            return pending.result(timeout=None if remaining is None else max(0.0, remaining))
        except TimeoutError:
            error = timed_out("no delivery report within send_msg_timeout")
            self._scheduler.call_later(0, partial(self._give_up, pending, error))
            return pending.result()

    def drain(self) -> None:
        """Block until every submitted send has its outcome (each attempt is time-bounded)."""
        # Flag first, then look: a send settled in between either sees the flag (and sets
        # the event) or left the set before the look.
        while True:
            self._draining = True
            self._drained.clear()
            if not self._in_flight:
                return
            self._drained.wait()

    def close(self) -> None:
        """Drain, then stop the threads and flush librdkafka."""
        self.drain()
        self._scheduler.stop()
        self._closed.set()
        if self._poller.is_alive():
            self._poller.join()
        for producer in [*self._retired, self._producer, self._immediate.started]:
            if producer is not None:
                producer.flush()
        self._trace_acknowledged()

    def _poll(self) -> None:
        # Every send's outcome (and every sync send() waiting for it) depends on this
        # thread: an exception escaping a delivery callback through poll() is logged
        # and polling goes on, never ends the thread.
        while not self._closed.is_set():
            try:
                self._poll_once()
            except BUG_ERRORS:
                log.exception("producer poll thread: unexpected error (polling continues)")

    def _poll_once(self) -> None:
        self.producer.poll(_CLOSING_POLL_S if self._draining else _POLL_S)
        self._immediate.serve_idle()
        for old in list(self._retired):
            if old.poll(0) == 0 and len(old) == 0:
                self._retired.remove(old)
        self._trace_acknowledged()

    def _trace_acknowledged(self) -> None:
        """Hand the sends acknowledged so far to the trace sink, in one append (any thread
        that polls may do it while another does)."""
        popleft, taken = self._acknowledged.popleft, []
        for _ in range(len(self._acknowledged)):  # only those there now: more may come
            try:
                taken.append(popleft())
            except IndexError:  # another thread took the rest
                break
        if taken:
            hooks.published(self._tracer, taken)

    def _replace(self, broken: Producer) -> None:
        """Swap in a new librdkafka client unless ``broken`` was already replaced."""
        if self._immediate.replace(broken):
            log.warning("the Kafka producer client of sync sends became unusable; replacing it")
            self._retired.append(broken)
            return
        if self._producer is not broken:
            return
        log.warning("the Kafka producer client became unusable; replacing it")
        self._retired.append(broken)
        self._producer = Producer(self._settings)
        if self._lane is not None:
            self._lane.producer = self._producer

    def _attempt(self, pending: PendingSend) -> None:
        # A caller waits for a send with a deadline: it goes without the batch linger.
        producer = self.producer if pending.deadline is None else self._immediate.client()
        try:
            pending.start_attempt(producer, self._report)
        except (BufferError, KafkaException) as exc:
            self._refused(producer, pending, exc)

    def _refused(self, producer: Producer, pending: PendingSend, exc: BaseException) -> None:
        # librdkafka refused an attempt: its queue is full (BufferError), or it failed it.
        if isinstance(exc, BufferError):
            self._produce_when_room(producer, pending)
        else:
            self._failed(pending, as_kafka_error(exc), producer)

    def _produce_when_room(self, producer: Producer, pending: PendingSend) -> None:
        # Backpressure: wait for librdkafka to drain its queue, within this send's time.
        remaining_s = pending.remaining_s()
        wait_s = self._queue_wait_s if remaining_s is None else max(0.0, remaining_s)
        try:
            tenacity.Retrying(
                retry=tenacity.retry_if_exception_type(BufferError),
                stop=tenacity.stop_after_delay(wait_s),
                wait=tenacity.wait_exponential(multiplier=0.001, max=0.05),
                reraise=True,
            )(pending.produce_on, producer)
        except (BufferError, KafkaException) as exc:
            self._failed(pending, as_kafka_error(exc), producer)

    def _unspool(self, entry: SpoolEntry) -> None:
        # Deleted only now that the broker acknowledged the re-send. If deleting fails the
        # send still succeeded: the entry stays and a later resend duplicates it (at least
        # once, as every resend after a timeout may), which beats failing the send. Any
        # exception (a Spool subclass may raise more than OSError) must not keep the
        # outcome from its future, or a sync send would wait forever.
        if self._spool is None:
            return
        try:
            self._spool.remove(entry)
        except Exception:
            log.exception("sent spooled message %s but could not delete it", entry.msg_id)

    def _failed(
        self, pending: PendingSend, err: KafkaError, producer: Producer | None = None
    ) -> None:
        if producer is not None and needs_new_client(err):
            # Runs before the retry below: jobs due at the same time run in order.
            self._scheduler.call_later(0, partial(self._replace, producer))
        delay = self._backoff.delay_s(max(1, pending.attempts))
        remaining = pending.remaining_s()
        if (
            is_retriable(err)
            and 0 < pending.attempts < pending.max_attempts
            and (remaining is None or remaining > delay)
        ):
            self._scheduler.call_later(delay, partial(self._attempt, pending))
        else:
            # Spool writes fsync: never on the poll thread.
            self._scheduler.call_later(0, partial(self._give_up, pending, err))

    def _give_up(self, pending: PendingSend, err: KafkaError) -> None:
        if pending.done():  # timed out already (see wait); this is a late report
            return
        if self._spool is not None and pending.spool_entry is None and is_retriable(err):
            entry = SpoolEntry(
                pending.msg_id, pending.record(), self._clock_ms(), err.name(), pending.attempts
            )
            try:
                path = self._spool.put(entry)
            except OSError as exc:
                log.error("could not spool message %s: %s", entry.msg_id, exc)
            else:
                spooled = SendResult(
                    SendStatus.SPOOLED, entry.msg_id, spool_path=str(path), attempts=entry.attempts
                )
                self._resolve(pending, spooled)
                return
        message = pending.message
        assert message is not None  # released only once delivered, and it was not
        self._resolve(pending, send_error(err, message, pending.attempts))

    def _resolve(self, pending: PendingSend, outcome: SendResult | BaseException) -> None:
        try:
            if isinstance(outcome, BaseException):
                pending.set_exception(outcome)
            else:
                pending.set_result(outcome)
        except InvalidStateError:
            # Delivered while its deadline passed: the delivery stands and was settled (a
            # spool entry written meanwhile is re-sent later: a duplicate, never a loss).
            return
        self._report.leave(pending)

    def _none_in_flight(self) -> None:
        if self._draining:
            self._drained.set()
