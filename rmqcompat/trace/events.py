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
from rmqcompat.trace.codec import TraceRecord
from rmqcompat.trace.schema import SCHEMA

ConsumeStatus = Literal["SUCCESS", "RECONSUME_LATER", "EXCEPTION", "TIME_OUT"]


def default_client_id(name: str) -> str:
    """``host@pid@name``, like RocketMQ's ``clientId`` (``ip@instanceName``)."""
    return f"{socket.gethostname()}@{os.getpid()}@{name}"


_ORIGIN_MESSAGE_ID, _TAGS, _KEYS = props.ORIGIN_MESSAGE_ID, props.TAGS, props.KEYS
#: Every field of an event, in the schema's order.
_FIELDS = tuple(spec["name"] for spec in SCHEMA["fields"])


def _message_fields(msg: MessageExt) -> TraceRecord:
    """The fields every event about a received message has."""
    get = msg.properties.get
    return {
        "topic": msg.topic,
        "partition": msg.queue_id,
        "offset": msg.queue_offset,
        "msg_id": msg.msg_id,
        "origin_msg_id": get(_ORIGIN_MESSAGE_ID),
        "tags": get(_TAGS),
        "keys": get(_KEYS),
        "reconsume_times": msg.reconsume_times,
        "born_ms": msg.born_timestamp,
    }


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
    # The PUBLISH event before its per-send fields (the client's set, every other null):
    # built once, copied per acknowledged send.
    _publish: TraceRecord = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_publish", self._complete("PUBLISH"))

    def _complete(self, event: str, **fields: object) -> TraceRecord:
        """An ``event`` with every schema field: this client's, ``fields``, the rest null.
        Events copied from one are read by the encoder in one step, not field by field."""
        base = dict.fromkeys(_FIELDS)
        base.update(event=event, client_id=self.client_id, host=self.host, namespace=self.namespace)
        base.update(fields)
        return base

    def _event(self, event: str, msg_id: str, fields: TraceRecord) -> TraceRecord:
        fields.update(
            event=event,
            timestamp_ms=self.clock(),
            client_id=self.client_id,
            host=self.host,
            namespace=self.namespace,
            msg_id=msg_id,
        )
        return fields

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
            self._publish,
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
        fields = _message_fields(msg)
        fields["event"] = "CONSUME"
        fields["timestamp_ms"] = self.clock()
        fields["client_id"] = self.client_id
        fields["host"] = self.host
        fields["namespace"] = self.namespace
        fields["group"] = group
        fields["physical_topic"] = physical_topic
        fields["status"] = status
        fields["duration_ms"] = duration_ms
        fields["delay_level"] = None
        fields["due_ms"] = None
        fields["target_topic"] = None
        fields["reason"] = None
        return fields

    def send_back(
        self, msg: MessageExt, group: str, level: int, due_ms: int, target_topic: str
    ) -> TraceRecord:
        """The broker stored the retry of a failed delivery (``reconsume_times`` is the
        failed delivery's; the next one has one more)."""
        fields = _message_fields(msg)
        fields.update(group=group, delay_level=level, due_ms=due_ms, target_topic=target_topic)
        return self._event("SEND_BACK", msg.msg_id, fields)

    def dead_letter(self, msg: MessageExt, group: str, dlq_topic: str, reason: str) -> TraceRecord:
        """The broker stored ``msg`` in ``group``'s DLQ."""
        fields = _message_fields(msg)
        fields.update(group=group, target_topic=dlq_topic, reason=reason)
        return self._event("DEAD_LETTER", msg.msg_id, fields)

    def discard(self, msg: MessageExt, group: str, reason: str) -> TraceRecord:
        """``msg`` was dropped on purpose (``dead_letter=False``, or a broadcast failure)."""
        fields = _message_fields(msg)
        fields.update(group=group, reason=reason)
        return self._event("DISCARD", msg.msg_id, fields)

    def filtered(self, msg: MessageExt, group: str) -> TraceRecord:
        """``group``'s subscription does not take ``msg``'s tag: it is skipped."""
        fields = _message_fields(msg)
        fields["group"] = group
        return self._event("FILTER", msg.msg_id, fields)

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
