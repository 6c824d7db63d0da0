"""Constructors of trace events, one per thing that happens to a message.

An :class:`Emitter` stamps who and when (client id, host, namespace, clock) on every event
it builds; each method returns a :data:`~rmqcompat.trace.codec.TraceRecord` ready for a
sink. Building an event is cheap (one dict); encoding happens on the sink's thread.
Fields left out of a dict are null.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from rmqcompat import properties as props
from rmqcompat.clock import Clock, epoch_ms
from rmqcompat.message import MessageExt
from rmqcompat.trace.bulk import identity
from rmqcompat.trace.codec import TraceRecord
from rmqcompat.trace.schema import EVENT_TYPES, SCHEMA

ConsumeStatus = Literal["SUCCESS", "RECONSUME_LATER", "EXCEPTION", "TIME_OUT"]


def default_client_id(name: str) -> str:
    """``host@pid@name``, like RocketMQ's ``clientId`` (``ip@instanceName``)."""
    return f"{socket.gethostname()}@{os.getpid()}@{name}"


_ORIGIN_MESSAGE_ID, _TAGS, _KEYS = props.ORIGIN_MESSAGE_ID, props.TAGS, props.KEYS
#: Every field of an event, in the schema's order.
_FIELDS = tuple(spec["name"] for spec in SCHEMA["fields"])


@dataclass(frozen=True)
class Emitter:
    """Builds the trace events of one client.

    Args:
        client_id: names the emitting client (see :func:`default_client_id`).
        namespace: the client's namespace (logical names in events are without it).
        clock: epoch-ms clock stamped as ``timestamp_ms``.
    """

    client_id: str
    namespace: str = ""
    clock: Clock = epoch_ms
    host: str = field(default_factory=socket.gethostname)
    # Each event type before its per-event fields (the client's set, every other null):
    # built once, copied per event.
    _bases: dict[str, TraceRecord] = field(init=False, repr=False, compare=False)
    #: The encoding of client id, host and namespace (:mod:`rmqcompat.trace.bulk`).
    who: bytes = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        bases = {event: self._complete(event) for event in EVENT_TYPES}
        object.__setattr__(self, "_bases", bases)
        object.__setattr__(self, "who", identity(self.client_id, self.host, self.namespace))

    def _complete(self, event: str, **fields: object) -> TraceRecord:
        """An ``event`` with every schema field: this client's, ``fields``, the rest null.
        Events copied from one are read by the encoder in one step, not field by field."""
        base = dict.fromkeys(_FIELDS)
        base.update(event=event, client_id=self.client_id, host=self.host, namespace=self.namespace)
        base.update(fields)
        return base

    def _about(self, event: str, msg: MessageExt) -> TraceRecord:
        """A complete ``event`` about the received ``msg``, with the fields every event
        about a received message has."""
        record = self._bases[event].copy()
        get = msg.properties.get
        record["timestamp_ms"] = self.clock()
        record["topic"] = msg.topic
        record["partition"] = msg.queue_id
        record["offset"] = msg.queue_offset
        record["msg_id"] = msg.msg_id
        record["origin_msg_id"] = get(_ORIGIN_MESSAGE_ID)
        record["tags"] = get(_TAGS)
        record["keys"] = get(_KEYS)
        record["reconsume_times"] = msg.reconsume_times
        record["born_ms"] = msg.born_timestamp
        return record

    def _event(self, event: str, msg_id: str, fields: TraceRecord) -> TraceRecord:
        """A complete ``event`` (see :meth:`_complete`) with ``fields`` set."""
        record = self._bases[event].copy()
        record.update(fields)
        record["timestamp_ms"] = self.clock()
        record["msg_id"] = msg_id
        return record

    def publish(
        self,
        msg_id: str,
        topic: str,
        physical_topic: str,
        *,
        tags: str | None = None,
        keys: str | None = None,
        born_ms: int | None = None,
        delay_level: int | None = None,
        due_ms: int | None = None,
    ) -> TraceRecord:
        """A producer's send was acknowledged by the broker (``physical_topic`` is where
        the record went: the business topic, or a level topic for a scheduled message).

        Called once per acknowledged send: a copy of a prepared event with every field
        set (the encoder then reads it in one step instead of field by field)."""
        return dict(
            self._bases["PUBLISH"],
            timestamp_ms=self.clock(),
            topic=topic,
            physical_topic=physical_topic,
            msg_id=msg_id,
            tags=tags,
            keys=keys,
            born_ms=born_ms,
            delay_level=delay_level,
            due_ms=due_ms,
        )

    def consume(
        self,
        msg: MessageExt,
        group: str,
        status: ConsumeStatus,
        duration_ms: int,
        physical_topic: str | None = None,
    ) -> TraceRecord:
        """One delivery of ``msg`` to ``group``'s listener and how it ended.

        Called once per consumed message: every field is set (the encoder reads a
        complete event in one step).
        """
        # item stores, not update(**kwargs): no keyword dict per consumed message
        record = self._about("CONSUME", msg)
        record["group"] = group
        record["physical_topic"] = physical_topic
        record["status"] = status
        record["duration_ms"] = duration_ms
        return record

    def send_back(
        self, msg: MessageExt, group: str, level: int, due_ms: int | None, target_topic: str
    ) -> TraceRecord:
        """The broker stored the retry of a failed delivery (``reconsume_times`` is the
        failed delivery's; the next one has one more), parked until ``due_ms`` (None: a
        level of delay 0 sent it straight to ``target_topic``)."""
        record = self._about("SEND_BACK", msg)
        record.update(group=group, delay_level=level, due_ms=due_ms, target_topic=target_topic)
        return record

    def dead_letter(self, msg: MessageExt, group: str, dlq_topic: str, reason: str) -> TraceRecord:
        """The broker stored ``msg`` in ``group``'s DLQ."""
        record = self._about("DEAD_LETTER", msg)
        record.update(group=group, target_topic=dlq_topic, reason=reason)
        return record

    def discard(self, msg: MessageExt, group: str, reason: str) -> TraceRecord:
        """``msg`` was dropped on purpose (``dead_letter=False``, or a broadcast failure)."""
        record = self._about("DISCARD", msg)
        record.update(group=group, reason=reason)
        return record

    def filtered(self, msg: MessageExt, group: str) -> TraceRecord:
        """``group``'s subscription does not take ``msg``'s tag: it is skipped."""
        record = self._about("FILTER", msg)
        record["group"] = group
        return record

    def forward(
        self,
        msg_id: str,
        topic: str,
        real_topic: str,
        physical_topic: str,
        partition: int,
        offset: int,
        due_ms: int,
        *,
        reconsume_times: int | None,
        delay_level: int | None,
        origin_msg_id: str | None = None,
    ) -> TraceRecord:
        """The forwarder delivered a parked record to ``real_topic`` (``%RETRY%<group>``
        for a retry); ``topic`` is the message's own logical topic (its ``RETRY_TOPIC``
        property on retries). ``timestamp_ms`` is the delivery time, so lateness is
        ``timestamp_ms - due_ms``; ``physical_topic``, ``partition`` and ``offset`` say
        where it was parked."""
        return self._event(
            "FORWARD",
            msg_id,
            {
                "topic": topic,
                "target_topic": real_topic,
                "physical_topic": physical_topic,
                "partition": partition,
                "offset": offset,
                "due_ms": due_ms,
                "reconsume_times": reconsume_times,
                "delay_level": delay_level,
                "origin_msg_id": origin_msg_id,
            },
        )

    def replay(
        self,
        msg_id: str,
        group: str,
        topic: str,
        replayed_to: str,
        *,
        origin_msg_id: str | None = None,
        reason: str | None = None,
    ) -> TraceRecord:
        """A dead letter of ``group`` was sent again to ``replayed_to`` (``reason``: the
        operator's command)."""
        return next(self.replays(group, [(msg_id, topic, replayed_to, origin_msg_id)], reason))

    def replays(
        self,
        group: str,
        letters: Iterable[tuple[str, str, str, str | None]],
        reason: str | None = None,
    ) -> Iterator[TraceRecord]:
        """One :meth:`replay` event per ``(msg_id, topic, replayed_to, origin_msg_id)``.

        Called once per replayed message: each is a copy of one prepared event with every
        field set (the encoder reads a complete event in one step)."""
        copy, clock = self._complete("REPLAY", group=group, reason=reason).copy, self.clock
        for msg_id, topic, replayed_to, origin_msg_id in letters:
            event = copy()
            event["timestamp_ms"] = clock()
            event["msg_id"] = msg_id
            event["topic"] = topic
            event["target_topic"] = replayed_to
            event["origin_msg_id"] = origin_msg_id
            yield event

    def quarantine(
        self,
        physical_topic: str,
        partition: int,
        offset: int,
        reason: str,
        *,
        msg_id: str = "",
        group: str | None = None,
    ) -> TraceRecord:
        """A record nobody can process was set aside in the quarantine topic (its id is
        unknown when its headers are unreadable: ``msg_id`` is then empty)."""
        return self._event(
            "QUARANTINE",
            msg_id,
            {
                "group": group,
                "physical_topic": physical_topic,
                "partition": partition,
                "offset": offset,
                "reason": reason,
            },
        )
