"""The send-back step: a failed message goes to its next stop (SEMANTICS section 4).

``rmqcompat.retry.route_failed`` decides where; the message is parked on a delay-level topic
(bound for ``%RETRY%<group>``) or produced straight to the physical ``%DLQ%<group>``
topic, or discarded (BROADCASTING's drop, or dead-lettering off). Completion is reported through a
callback driven by the producer's delivery report, so the caller releases the message
only once Kafka has it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer

from rmqcompat import properties as props
from rmqcompat.callbacks import callback
from rmqcompat.clock import Clock, epoch_ms
from rmqcompat.closing import close_producer
from rmqcompat.consumer.sendback_record import SendBackTarget, send_back_record
from rmqcompat.message import MessageExt
from rmqcompat.parking import ParkedAt
from rmqcompat.producer.failures import as_kafka_error, needs_new_client
from rmqcompat.producer_id import new_idempotent_producer
from rmqcompat.retry import (
    Destination,
    DestinationKind,
    RetryPolicy,
    dead_letter_properties,
    route_failed,
)
from rmqcompat.topics.naming import to_kafka_topic
from rmqcompat.trace import Tracer, bulk, hooks
from rmqcompat.wire import OutgoingRecord

_log = logging.getLogger("rmqcompat.consumer")

#: How many routes a send-back remembers (see :meth:`SendBack._route`).
ROUTES_KEPT = 256

#: Called once per produce: None when Kafka has the record, else why it has not.
Done = Callable[[KafkaError | None], None]


class RecordSink:
    """A confluent producer whose every produce ends in exactly one ``done(error)`` call.

    ``done`` runs on the thread that calls :meth:`poll` (the consumer's poll thread), or
    at once when ``produce`` itself refuses the record. Never raises on produce: a full
    local queue or a refused record is ``done(that error)``.

    A client that became unusable (fenced, a fatal idempotence error: ``needs_new_client``)
    is replaced by a new one from ``factory``, as the producer does, so the send-backs that
    failed on it succeed when they are tried again; the old client is polled until its
    last delivery report came.
    """

    def __init__(
        self,
        settings: dict[str, Any],
        factory: Callable[[dict[str, Any]], Producer] | None = None,
    ) -> None:
        self._settings = settings
        # the first client asks for its producer id at once (the consumer is starting);
        # a replacement does not wait for it on the poll thread
        self._factory = factory or Producer
        self._producer = (factory or new_idempotent_producer)(settings)
        self._retired: list[Producer] = []
        self.replacements = 0

    def produce(self, record: OutgoingRecord, done: Done) -> None:
        producer = self._producer
        try:
            # positional, as PendingSend.produce_on calls it (keywords cost 0.4 us a call):
            # partition -1 (the partitioner's), the report as ``callback``, timestamp 0
            report = callback(_reported, self, producer, record.topic, done)
            producer.produce(
                record.topic,
                record.value,
                record.key,
                -1,
                report,
                None,
                0,
                record.headers,  # type: ignore[arg-type]  # stub's list is invariant
            )
        except (BufferError, KafkaException) as exc:
            error = as_kafka_error(exc)
            self._failed(producer, record.topic, error)
            done(error)

    def _failed(self, producer: Producer, topic: str, err: KafkaError) -> None:
        _log.error("could not produce to %s: %s", topic, err)
        if needs_new_client(err) and producer is self._producer:
            _log.warning("the send-back producer became unusable (%s); replacing it", err)
            self._retired.append(producer)
            self._producer = self._factory(self._settings)
            self.replacements += 1

    def poll(self) -> None:
        self._producer.poll(0)
        for old in list(self._retired):
            if old.poll(0) == 0 and len(old) == 0:  # every report served: done with it
                self._retired.remove(old)
                old.close()

    def flush(self, timeout_s: float) -> int:
        for old in self._retired:
            old.flush(0)
        return self._producer.flush(timeout_s)

    def close(self) -> None:
        """Close every client, after the last :meth:`flush`. What is still queued is
        dropped, not lost: its message never left the process queue, so its offset stays
        uncommitted and it is consumed again. Never blocks on an unreachable broker."""
        for producer in (*self._retired, self._producer):
            close_producer(producer)
        self._retired.clear()


def _reported(
    sink: RecordSink,
    producer: Producer,
    topic: str,
    done: Done,
    err: KafkaError | None,
    _msg: object,
) -> None:
    """One produce's delivery report (bound with :data:`~rmqcompat.callbacks.callback`,
    holding the topic rather than the record, whose headers would stay alive with it): a
    failure is the sink's to handle, then ``done``."""
    if err is not None:
        sink._failed(producer, topic, err)  # noqa: SLF001
    done(err)


def _stored_back(
    stored: list[bulk.SentBack],
    clock: Clock,
    msg: MessageExt,
    reconsume_times: int,
    level: int,
    parked: ParkedAt,
    done: Done,
    err: KafkaError | None,
) -> None:
    """``done``, after noting for its SEND_BACK event (see :meth:`SendBack.trace_stored`)
    a send-back to a delay level the broker stored."""
    if err is None:
        due, target = parked
        stored.append((clock(), msg, reconsume_times, level, due, target))
    done(err)


def _dead_lettered(
    sendback: SendBack,
    msg: MessageExt,
    reconsume_times: int,
    dest: Destination,
    done: Done,
    err: KafkaError | None,
) -> None:
    """``done``, after tracing a dead letter the broker stored (:func:`hooks.dead_lettered`)."""
    if err is None:
        hooks.dead_lettered(sendback.tracer, msg, reconsume_times, sendback.group, dest)
    done(err)


class SendBack:
    """Sends failed messages back; ``send`` never blocks and never raises.

    A message that cannot be encoded (a listener replaced its body or a property with a
    value of the wrong type) is ``done(_INVALID_ARG)``: refused for good, like a record
    the broker refuses, so settlement dead-letters it or reports it stuck.
    """

    def __init__(
        self,
        sink: RecordSink,
        policy: RetryPolicy,
        namespace: str,
        now_ms: Clock = epoch_ms,
        tracer: Tracer | None = None,
    ) -> None:
        self._sink = sink
        self._policy = policy
        self._namespace = namespace
        self._now_ms = now_ms
        #: :func:`route_failed` of this policy by (stored count, delay level): a group's
        #: failed messages take a few routes, each decided once (1.3 us a call, timeit)
        self._routes: dict[tuple[int, int], Destination] = {}
        #: each level's :class:`SendBackTarget`, once a send-back went there (index: the
        #: level; a route to a level is bound for the group's retry topic, see
        #: ``route_failed``)
        self._targets: list[SendBackTarget | None] = [None] * (policy.levels.max_level + 1)
        #: the consumer's tracer: SEND_BACK, DEAD_LETTER and DISCARD here, CONSUME in
        #: settlement
        self.tracer = tracer or Tracer.disabled()
        #: SEND_BACK events of send-backs stored since the last :meth:`trace_stored`
        self._stored: list[bulk.SentBack] = []

    @property
    def group(self) -> str:
        return self._policy.group

    def trace_stored(self) -> None:
        """Hand the SEND_BACK events noted since the last call to the trace, in one append
        (the poll loop calls it each round, after the round's delivery reports)."""
        if self._stored:
            stored = self._stored.copy()  # the list stays: each traced report holds it
            self._stored.clear()
            hooks.settled_back_run(self.tracer, self.group, stored)

    def send(self, msg: MessageExt, reconsume_times: int, delay_level: int, done: Done) -> None:
        """Route ``msg`` (its topic already reset to the original one) and produce it.

        ``reconsume_times`` is the stored count: RocketMQ's broker decides by the stored
        message, so a local re-consume after a failed send-back (+1) does not count.
        """
        dest = self._route(reconsume_times, delay_level)
        if dest.kind is DestinationKind.DISCARD:
            _log.warning(
                "consume failed, drop %s after %d reconsumes (%s; group=%s)",
                msg.msg_id,
                reconsume_times,
                dest.reason,
                self.group,
            )
            if self.tracer.enabled:
                self.tracer.emit(self.tracer.events.discard(msg, self.group, dest.reason))
            done(None)
            return
        if dest.kind is DestinationKind.SUSPEND:  # the orderly service keeps these itself
            raise ValueError(f"{msg.msg_id} is retried in place, not sent back")
        try:
            record, parked_at = self._record(msg, reconsume_times, dest)
        except (TypeError, ValueError, AttributeError) as exc:
            _log.error("cannot encode %s for send-back: %r", msg.msg_id, exc)
            done(KafkaError(KafkaError._INVALID_ARG, f"cannot encode the message: {exc!r}"))  # noqa: SLF001
            return
        if self.tracer.enabled:
            done = self._traced(msg, reconsume_times, dest, parked_at, done)
        self._sink.produce(record, done)

    def _route(self, reconsume_times: int, delay_level: int) -> Destination:
        """:func:`route_failed` of this send-back's policy, remembered: at most
        :data:`ROUTES_KEPT` routes, all forgotten when full (a listener's arbitrary delay
        levels cannot grow it)."""
        key = (reconsume_times, delay_level)
        dest = self._routes.get(key)
        if dest is None:
            dest = route_failed(self._policy, reconsume_times, delay_level)
            if len(self._routes) >= ROUTES_KEPT:
                self._routes.clear()
            self._routes[key] = dest
        return dest

    def _traced(
        self,
        msg: MessageExt,
        reconsume_times: int,
        dest: Destination,
        parked_at: ParkedAt | None,
        done: Done,
    ) -> Done:
        """``done``, after tracing the send-back of ``msg`` once the broker stored it: a
        DEAD_LETTER event then (``parked_at`` None), else a SEND_BACK event of where it
        parked with the next :meth:`trace_stored`."""
        if parked_at is None:
            return callback(_dead_lettered, self, msg, reconsume_times, dest, done)
        clock = self.tracer.events.clock
        return callback(
            _stored_back, self._stored, clock, msg, reconsume_times, dest.level, parked_at, done
        )

    def _record(
        self, msg: MessageExt, reconsume_times: int, dest: Destination
    ) -> tuple[OutgoingRecord, ParkedAt | None]:
        """The record that sends ``msg`` to ``dest``, and where it parks (None: to the
        DLQ)."""
        if dest.kind is DestinationKind.DLQ:
            properties = dead_letter_properties(msg, self._policy, msg.topic, reconsume_times)
            record = OutgoingRecord(
                to_kafka_topic(dest.real_topic, self._namespace),
                msg.body,
                msg.key,
                props.to_headers(properties),
            )
            return record, None
        target = self._targets[dest.level]
        if target is None or target.real_topic != dest.real_topic:
            target = self._target(dest)
        return send_back_record(msg, reconsume_times, target, self._now_ms())

    def _target(self, dest: Destination) -> SendBackTarget:
        levels, level = self._policy.levels, dest.level
        target = SendBackTarget.of(dest.real_topic, level, levels, self._namespace)
        self._targets[level] = target
        return target
