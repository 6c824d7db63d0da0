"""Trace events built from what the data path has at hand (records, routing decisions).

Each function is called where the SDK decides what it names (``consumed``: concurrent
and orderly settlement; ``quarantined``: the consumer's intake, the forwarder's plan and
its delivery reports), only when ``tracer.enabled``; none raises for a malformed record
(a bad header yields a partial event, never an exception into the data path).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

from rmqcompat import parking
from rmqcompat import properties as props
from rmqcompat.errors import MalformedHeaderError
from rmqcompat.message import Message, MessageExt
from rmqcompat.retry import Destination, DestinationKind
from rmqcompat.topics.naming import from_kafka_topic
from rmqcompat.trace.events import ConsumeStatus
from rmqcompat.trace.tracer import Tracer
from rmqcompat.wire import KafkaRecord, OutgoingRecord, decode_properties, offset_message_id


def _properties(headers: list[tuple[str, bytes | None]] | None) -> dict[str, str]:
    try:
        return decode_properties(headers)
    except MalformedHeaderError:
        return {}


def _int(properties: Mapping[str, str], name: str) -> int | None:
    text = properties.get(name)
    return int(text) if text is not None and text.lstrip("-").isdigit() else None


def published(
    tracer: Tracer,
    message: Message,
    msg_id: str,
    physical_topic: str,
    born_ms: int | None,
    headers: Iterable[tuple[str, bytes | None]] = (),
) -> None:
    """The broker acknowledged ``message`` (sent as ``msg_id`` to ``physical_topic`` with
    ``headers``). A delayed message records when it is due as the producer wrote it: its
    delivery time, or the ``DUE_TIME`` of the level it was parked on."""
    due_ms = message.deliver_time_ms
    if due_ms is None and message.delay_time_level:
        due_ms = parking.stamped_due(headers)
    tracer.emit(
        tracer.events.publish(
            msg_id,
            message.topic,
            physical_topic,
            tags=message.tags,
            keys=props.join_keys(message.keys),
            born_ms=born_ms,
            delay_level=message.delay_time_level or None,
            due_ms=due_ms,
        )
    )


def consumed(
    tracer: Tracer,
    group: str,
    msgs: Sequence[MessageExt],
    failed: Collection[int],
    duration_ms: int,
    timed_out: bool = False,
    raised: bool = False,
) -> None:
    """One listener call on ``msgs`` ended: the ``failed`` indexes RECONSUME_LATER (or
    TIME_OUT when the call outlasted the consume timeout, EXCEPTION when the listener
    raised), the others SUCCESS."""
    consume, emit = tracer.events.consume, tracer.sink.emit
    if not failed:  # the common case: no index test per message
        for msg in msgs:
            emit(consume(msg, group, "SUCCESS", duration_ms))
        return
    late: ConsumeStatus = "TIME_OUT" if timed_out else "EXCEPTION" if raised else "RECONSUME_LATER"
    for i, msg in enumerate(msgs):
        status: ConsumeStatus = late if i in failed else "SUCCESS"
        emit(consume(msg, group, status, duration_ms))


def settled_back(
    tracer: Tracer,
    msg: MessageExt,
    reconsume_times: int,
    group: str,
    dest: Destination,
    record: OutgoingRecord,
) -> None:
    """The broker stored the send-back of ``msg`` (whose delivery with the stored count
    ``reconsume_times`` failed) at ``dest``: a delay level, or the DLQ. ``record`` is what
    was produced: its topic and ``DUE_TIME`` are recorded as written, never recomputed."""
    if dest.kind is DestinationKind.DLQ:
        event = tracer.events.dead_letter(msg, group, dest.real_topic, "routed to the DLQ")
    else:
        target = from_kafka_topic(record.topic)[1]
        due = parking.stamped_due(record.headers)
        event = tracer.events.send_back(msg, group, dest.level, due, target)
    event["reconsume_times"] = reconsume_times
    tracer.emit(event)


def forwarded(
    tracer: Tracer, source: KafkaRecord, properties: Mapping[str, str], due_ms: int
) -> None:
    """The forwarder produced parked ``source`` (whose parsed headers are ``properties``)
    to its real topic, or to its next level."""
    partition, offset = source.partition() or 0, source.offset() or 0
    physical = source.topic() or ""
    real_topic = properties.get(props.REAL_TOPIC, "")
    tracer.emit(
        tracer.events.forward(
            properties.get(props.UNIQ_KEY) or offset_message_id(physical, partition, offset),
            properties.get(props.RETRY_TOPIC, real_topic),
            real_topic,
            physical,
            partition,
            offset,
            due_ms,
            reconsume_times=_int(properties, props.RECONSUME_TIME),
            delay_level=_int(properties, props.DELAY),
            origin_msg_id=properties.get(props.ORIGIN_MESSAGE_ID),
        )
    )


def quarantined(tracer: Tracer, source: KafkaRecord, reason: str, group: str | None = None) -> None:
    """``source`` was set aside in the quarantine topic."""
    msg_id = _properties(source.headers()).get(props.UNIQ_KEY, "")
    tracer.emit(
        tracer.events.quarantine(
            source.topic() or "",
            source.partition() or 0,
            source.offset() or 0,
            reason,
            msg_id=msg_id,
            group=group,
        )
    )


def replayed(
    tracer: Tracer,
    group: str,
    letters: Iterable[tuple[str, str, str, str | None]],
    command: str,
) -> None:
    """Dead letters of ``group`` were sent again (committed): each ``(msg_id, original
    topic, replayed to, origin msg id)``; ``command`` is the operator's command line."""
    emit = tracer.sink.emit
    for event in tracer.events.replays(group, letters, command):
        emit(event)
