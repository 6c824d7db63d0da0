"""What the forwarder does with the head record of a level partition (pure, clock passed in).

One of three plans: :class:`Wait` until the due time (:func:`rmqcompat.parking.due_time`:
the broker's append time + the level topic's delay, corrected for clock jumps only);
:class:`Forward` the released message to its real topic, or hop a timer message on to
the next level; :class:`Quarantine` a record that cannot be parsed. Parsing happens before the due
check,
so a poison record is set aside at once instead of blocking its partition until "due".

A forwarded record keeps ``REAL_TOPIC``, ``REAL_QID`` and ``DELAY`` (as RocketMQ does) and goes to
partition ``REAL_QID`` of its real topic, or to the partition its key picks when that is
:data:`rmqcompat.parking.ANY_QUEUE`.

This runs once per forwarded record, so the common case (well-formed headers, no timer
property) is a fast path, :func:`plain_release` (compiled where the core is built): it keeps
the record's raw header bytes minus ``DUE_TIME`` instead of re-encoding every property, and
the real topic name is validated and mapped once (:class:`Planner` caches it). Anything
else (timer messages, any property the rules refuse) takes the general path through
:func:`rmqcompat.parking.release`, which also names what makes a record a poison one; a
unit test pins both paths to the same output.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from confluent_kafka import TIMESTAMP_LOG_APPEND_TIME

from rmqcompat import parking
from rmqcompat import properties as props
from rmqcompat.core import CORE
from rmqcompat.errors import ConfigError, InvalidNameError, MalformedHeaderError
from rmqcompat.forwarder.schedule import corrected_due, is_due
from rmqcompat.properties import JAVA_LONG_MAX, Headers
from rmqcompat.quarantine import quarantine_record
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.naming import to_kafka_topic, validate_topic
from rmqcompat.wire import KafkaRecord, OutgoingRecord, decode_properties, decode_well_formed


@dataclass(frozen=True, slots=True)
class Wait:
    due_ms: int


@dataclass(slots=True)
class Forward:
    """Produce ``record``; ``hop`` means it goes to another level rather than its real
    topic. ``properties``: the parked record's own, as parsed (its trace event reads them).

    Not frozen, for the reason :class:`~rmqcompat.wire.OutgoingRecord` gives: one is built
    for every forwarded record."""

    record: OutgoingRecord
    due_ms: int
    hop: bool
    properties: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class Quarantine:
    record: OutgoingRecord
    reason: str


Plan = Wait | Forward | Quarantine
_BAD_RECORD = (MalformedHeaderError, InvalidNameError, ConfigError)

#: What :func:`plain_release` finds: (due time acted on, properties, REAL_TOPIC, REAL_QID,
#: the headers to forward, or None while the record is not due).
PlainRelease = tuple[int, dict[str, str], str, int, list[tuple[str, bytes | None]] | None]
_LONG_MIN = -JAVA_LONG_MAX - 1


def plain_release(
    headers: object, append_ms: int | None, level_delay_ms: int, now_ms: int
) -> PlainRelease | None:
    """The common case of :meth:`Planner.plan_read` in one call, or None for the rest.

    The common case: ``headers`` decode as well-formed properties (``decode_well_formed``)
    without ``TIMER_DELIVER_MS``, with a ``REAL_TOPIC``, every number the rules read
    (``DUE_TIME``, ``REAL_QID``) valid, and the due time and ``REAL_QID`` within a Java
    long. None sends the record down the general path, which decides the same way and
    names what is wrong with a poison record: this never decides a quarantine. The
    pure-Python reference of the core's
    ``plain_release`` (``tests/unit/test_core_parity.py``).
    """
    properties = decode_well_formed(headers)
    if properties is None or props.TIMER_DELIVER_MS in properties:
        return None
    real_topic = properties.get(props.REAL_TOPIC)
    if not real_topic:
        return None
    try:
        due = parking.due_time(properties, append_ms=append_ms, level_delay_ms=level_delay_ms)
        real_qid = parking.real_qid(properties)
    except MalformedHeaderError:
        return None
    due = corrected_due(due, now_ms, level_delay_ms)
    # a due time outside a long comes only from a DUE_TIME or an append time at its end
    if not _LONG_MIN <= due <= JAVA_LONG_MAX or real_qid > JAVA_LONG_MAX:
        return None
    if not is_due(due, now_ms):
        return due, properties, real_topic, real_qid, None
    assert isinstance(headers, list)  # decode_well_formed read it as one
    return due, properties, real_topic, real_qid, _kept(headers)


def _kept(headers: Headers | None) -> list[tuple[str, bytes | None]]:
    """A released record's headers: the parked record's raw ones minus the release strips."""
    return [h for h in headers or () if h[0] not in parking.RELEASE_STRIPS]


_plain_release = plain_release if CORE is None else CORE.plain_release
#: How many real topics a :class:`Planner` remembers before it starts over.
_ACCEPTED_MAX = 4096


class Planner:
    """:func:`plan_head` for one delay table and namespace."""

    def __init__(self, levels: DelayLevels, namespace: str) -> None:
        self._levels = levels
        self._namespace = namespace
        # real topics accepted so far and their Kafka names: one dict lookup per forwarded
        # record instead of the two cached rules' calls (bounded against unbounded names)
        self._accepted: dict[str, str] = {}

    @property
    def accepted(self) -> Mapping[str, str]:
        """The real topics accepted so far and their Kafka names (read by a run of
        forwards, :mod:`rmqcompat.forwarder.run`, which forwards only to these)."""
        return self._accepted

    def plan(self, record: KafkaRecord, level_delay_ms: int, now_ms: int) -> Plan:
        """Never raises for bad record content: such records get a :class:`Quarantine` plan."""
        return self.plan_read(record, record.headers(), level_delay_ms, now_ms)

    def plan_read(
        self, record: KafkaRecord, headers: Headers | None, level_delay_ms: int, now_ms: int
    ) -> Plan:
        """:meth:`plan` for a record whose ``headers()`` the caller has read already (each
        call of confluent's builds them anew)."""
        append_ms = record_append_ms(record)
        plain = _plain_release(headers, append_ms, level_delay_ms, now_ms)
        if plain is not None:
            due, properties, real_topic, real_qid, kept = plain
            topic = self._accepted.get(real_topic)
            if topic is None:
                try:  # an unusable real topic is set aside at once, due or not
                    topic = self._accept(real_topic)
                except _BAD_RECORD as exc:
                    return self._quarantine(record, exc)
            if kept is None:
                return Wait(due)
            return _forward(record, topic, kept, _partition(real_qid), due, properties)
        try:
            properties = decode_properties(headers)
            due = parking.due_time(properties, append_ms=append_ms, level_delay_ms=level_delay_ms)
            due = corrected_due(due, now_ms, level_delay_ms)
            if props.TIMER_DELIVER_MS in properties:
                return self._timer(record, properties, due, now_ms)
            topic = self._physical_topic(properties.get(props.REAL_TOPIC))
            partition = _partition(parking.real_qid(properties))
        except _BAD_RECORD as exc:
            return self._quarantine(record, exc)
        if not is_due(due, now_ms):
            return Wait(due)
        return _forward(record, topic, _kept(headers), partition, due, properties)

    def _accept(self, real_topic: str) -> str:
        """:meth:`_physical_topic`, remembered for the plain path's next records."""
        topic = self._physical_topic(real_topic)
        if len(self._accepted) >= _ACCEPTED_MAX:
            self._accepted.clear()
        self._accepted[real_topic] = topic
        return topic

    def _physical_topic(self, real_topic: str | None) -> str:
        if not real_topic:
            raise MalformedHeaderError(f"header {props.REAL_TOPIC} is missing")
        # both rules cache what they accept: a real topic is checked once per process
        return to_kafka_topic(validate_topic(real_topic), self._namespace)

    def _timer(self, record: KafkaRecord, properties: dict[str, str], due: int, now: int) -> Plan:
        try:
            released = parking.release(properties, self._levels, now)
            real_topic = to_kafka_topic(released.real_topic, self._namespace)
        except _BAD_RECORD as exc:
            return self._quarantine(record, exc)
        if not is_due(due, now):
            return Wait(due)
        value = record.value() or b""
        if released.next_level is None:
            headers = props.to_headers(released.properties)
            out = OutgoingRecord(
                real_topic, value, record.key(), headers, _partition(released.real_qid)
            )
            return Forward(out, due, False, properties)
        hop = parking.park(
            value, record.key(), released.properties, real_topic=released.real_topic,
            level=released.next_level, levels=self._levels, namespace=self._namespace, now_ms=now,
            real_qid=released.real_qid,
        )  # fmt: skip
        return Forward(hop, due, True, properties)

    def _quarantine(self, record: KafkaRecord, exc: Exception) -> Quarantine:
        reason = f"{type(exc).__name__}: {exc}"
        return Quarantine(quarantine_record(record, reason, self._namespace), reason)


def _forward(
    record: KafkaRecord,
    topic: str,
    kept: list[tuple[str, bytes | None]],
    partition: int | None,
    due: int,
    properties: Mapping[str, str],
) -> Forward:
    """The plan that forwards ``record`` to its real ``topic`` with the ``kept`` headers."""
    value, key = record.value() or b"", record.key()
    return Forward(OutgoingRecord(topic, value, key, kept, partition), due, False, properties)


def record_append_ms(record: KafkaRecord) -> int | None:
    """The broker's append time of ``record``, or None where the topic keeps the producer's."""
    kind, timestamp = record.timestamp()
    return timestamp if kind == TIMESTAMP_LOG_APPEND_TIME else None


def _partition(real_qid: int) -> int | None:
    return None if real_qid == parking.ANY_QUEUE else real_qid


def plan_head(
    record: KafkaRecord, level_delay_ms: int, levels: DelayLevels, namespace: str, now_ms: int
) -> Plan:
    """Decide what to do with ``record``, the head of a partition of a level topic."""
    return Planner(levels, namespace).plan(record, level_delay_ms, now_ms)
