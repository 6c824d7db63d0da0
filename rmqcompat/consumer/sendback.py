"""The send-back step: a failed message goes to its next stop (SEMANTICS section 4).

``routing.route_failed`` decides where; the message is parked on a delay-level topic
(bound for ``%RETRY%<group>``) or produced straight to the physical ``%DLQ%<group>``
topic, or discarded when dead-lettering is off. Completion is reported through a
callback driven by the producer's delivery report, so the caller releases the message
only once Kafka has it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer

from rmqcompat import properties as props
from rmqcompat.clock import Clock, epoch_ms
from rmqcompat.message import MessageExt
from rmqcompat.parking import park
from rmqcompat.producer.failures import as_kafka_error
from rmqcompat.routing import (
    Destination,
    DestinationKind,
    RetryPolicy,
    route_failed,
    sendback_properties,
)
from rmqcompat.topics.naming import to_kafka_topic
from rmqcompat.wire import OutgoingRecord

_log = logging.getLogger("rmqcompat.consumer")

#: Called once per produce: None when Kafka has the record, else why it has not.
Done = Callable[[KafkaError | None], None]


class RecordSink:
    """A confluent producer whose every produce ends in exactly one ``done(error)`` call.

    ``done`` runs on the thread that calls :meth:`poll` (the consumer's poll thread), or
    at once when ``produce`` itself refuses the record. Never raises on produce: a full
    local queue or a refused record is ``done(that error)``.
    """

    def __init__(self, settings: dict[str, Any]) -> None:
        self._producer = Producer(settings)

    def produce(self, record: OutgoingRecord, done: Done) -> None:
        def report(err: KafkaError | None, _msg: object) -> None:
            if err is not None:
                _log.error("could not produce to %s: %s", record.topic, err)
            done(err)

        try:
            self._producer.produce(
                record.topic, record.value, record.key, headers=record.headers, on_delivery=report
            )
        except (BufferError, KafkaException) as exc:
            _log.error("could not produce to %s: %s", record.topic, exc)
            done(as_kafka_error(exc))

    def poll(self) -> None:
        self._producer.poll(0)

    def flush(self, timeout_s: float) -> int:
        return self._producer.flush(timeout_s)


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
    ) -> None:
        self._sink = sink
        self._policy = policy
        self._namespace = namespace
        self._now_ms = now_ms

    @property
    def group(self) -> str:
        return self._policy.group

    def send(self, msg: MessageExt, reconsume_times: int, delay_level: int, done: Done) -> None:
        """Route ``msg`` (its topic already reset to the original one) and produce it.

        ``reconsume_times`` is the stored count: RocketMQ's broker decides by the stored
        message, so a local re-consume after a failed send-back (+1) does not count.
        """
        dest = route_failed(self._policy, reconsume_times, delay_level)
        if dest.kind is DestinationKind.DISCARD:
            _log.warning(
                "discarding %s after %d reconsumes (dead_letter is off)",
                msg.msg_id,
                reconsume_times,
            )
            done(None)
            return
        try:
            record = self._record(msg, reconsume_times, dest)
        except (TypeError, ValueError, AttributeError) as exc:
            _log.error("cannot encode %s for send-back: %r", msg.msg_id, exc)
            done(KafkaError(KafkaError._INVALID_ARG, f"cannot encode the message: {exc!r}"))  # noqa: SLF001
            return
        self._sink.produce(record, done)

    def _record(self, msg: MessageExt, reconsume_times: int, dest: Destination) -> OutgoingRecord:
        properties = sendback_properties(msg, self._policy, msg.topic, reconsume_times)
        if dest.kind is DestinationKind.DLQ:
            return OutgoingRecord(
                to_kafka_topic(dest.real_topic, self._namespace),
                msg.body,
                msg.key,
                props.to_headers(properties),
            )
        return park(
            msg.body,
            msg.key,
            properties,
            real_topic=dest.real_topic,
            level=dest.level,
            levels=self._policy.levels,
            namespace=self._namespace,
            now_ms=self._now_ms(),
        )
