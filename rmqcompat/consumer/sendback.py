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
from rmqcompat.routing import DestinationKind, RetryPolicy, route_failed, sendback_properties
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
    """Sends failed messages back; ``send`` never blocks and never raises for I/O errors."""

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

    def send(self, msg: MessageExt, delay_level: int, done: Done) -> None:
        """Route ``msg`` (its topic already reset to the original one) and produce it."""
        dest = route_failed(self._policy, msg.reconsume_times, delay_level)
        if dest.kind is DestinationKind.DISCARD:
            _log.warning(
                "discarding %s after %d reconsumes (dead_letter is off)",
                msg.msg_id,
                msg.reconsume_times,
            )
            done(None)
            return
        properties = sendback_properties(msg, self._policy, msg.topic)
        if dest.kind is DestinationKind.DLQ:
            record = OutgoingRecord(
                to_kafka_topic(dest.real_topic, self._namespace),
                msg.body,
                msg.key,
                props.to_headers(properties),
            )
        else:
            record = park(
                msg.body,
                msg.key,
                properties,
                real_topic=dest.real_topic,
                level=dest.level,
                levels=self._policy.levels,
                namespace=self._namespace,
                now_ms=self._now_ms(),
            )
        self._sink.produce(record, done)
