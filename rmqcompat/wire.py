"""How a message sits in a Kafka record: value = body, key = sharding key, headers = properties.

Records written by plain Kafka producers (no headers) are readable too: the message id
then falls back to an offset-based id and the born time to the record timestamp.

What decoding does with each property it reads (no record may stop a partition, so a
value is either used, clamped, or the record is quarantined with the reason):

- any header: no value, not UTF-8, or a repeated name: quarantine.
- ``RECONSUME_TIME``: not decimal: quarantine; clamped into 0..2^31-1 (a count below 0
  is impossible; a Java int above), so routing retries from level 3 or dead-letters.
- ``BORN_TIMESTAMP``: not decimal: quarantine; clamped into 0..2^63-1 (epoch ms, a Java
  long); it is only informative.
- ``FLAG``: not decimal or outside -2^31..2^31-1: quarantine (flag bits cannot be
  clamped meaningfully, and ``MessageExt.flag`` would fail the listener for ever).
- ``RETRY_TOPIC``: read on the group's retry topic only; not a legal RocketMQ topic
  name: quarantine (:mod:`rmqcompat.consumer.inbound`).
- ``UNIQ_KEY``, ``TAGS``, ``KEYS``, user properties: any text (an empty ``UNIQ_KEY``
  means "no id": the offset-based id is used).

Clamping is logged with the reason. Parking properties (``DELAY``, ``DUE_TIME``,
``REAL_TOPIC``, ``REAL_QID``, ``TIMER_DELIVER_MS``), ``CONSUME_START_TIME`` and
``MAX_RECONSUME_TIMES`` are never read by a consumer: send-back drops or rewrites them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Protocol

from confluent_kafka import KafkaError

from rmqcompat import properties as props
from rmqcompat.core import CORE
from rmqcompat.errors import MalformedHeaderError
from rmqcompat.message import MessageExt
from rmqcompat.topics.naming import from_kafka_topic

_log = logging.getLogger("rmqcompat.consumer")

#: A partition of a Kafka topic as consumers and the forwarder key their state by:
#: (physical topic, partition).
Key = tuple[str, int]
_JAVA_INT_MIN = -props.JAVA_INT_MAX - 1


class KafkaRecord(Protocol):
    """The part of ``confluent_kafka.Message`` that decoding reads."""

    def topic(self) -> str | None: ...
    def partition(self) -> int | None: ...
    def offset(self) -> int | None: ...
    def key(self) -> bytes | None: ...
    def value(self) -> bytes | None: ...
    def headers(self) -> list[tuple[str, bytes | None]] | None: ...
    def timestamp(self) -> tuple[int, int]: ...


class FetchedRecord(KafkaRecord, Protocol):
    """A record as a consumer fetched it: it may carry an error (an event, not a record)."""

    def error(self) -> KafkaError | None: ...


class Fetched(Protocol):
    """The records (or events) of one fetch, in order: the list ``consume()`` returns, or
    the compiled core's direct batch (:mod:`rmqcompat.consumer.fetcher`). An intake takes
    each record out once read (``records[i] = None``), so it is freed with its message."""

    def __len__(self) -> int: ...
    def __getitem__(self, at: int, /) -> Any: ...
    def __setitem__(self, at: int, value: None, /) -> None: ...


def run_offset(record: FetchedRecord, topic: str, partition: int) -> int | None:
    """``record``'s offset when it goes on the run of ``topic``'s ``partition`` that a
    consume call returned (no error, that partition and topic, an offset); None ends the
    run. The rule of the intakes that take a run in one call (the push consumer's
    ``accept_run``, the forwarder's ``hold_run``)."""
    if record.error() is not None or record.partition() != partition or record.topic() != topic:
        return None
    return record.offset()


@dataclass(slots=True)
class OutgoingRecord:
    """A record ready for ``Producer.produce``; nothing changes one once built.

    Not a frozen dataclass: one is built for every forwarded, sent-back and parked message,
    and a frozen one's ``__init__`` (a ``object.__setattr__`` call per field) took 0.85-0.95
    us against 0.23-0.25 us for this one (timeit, five fields).
    """

    topic: str
    value: bytes
    key: bytes | None
    headers: list[tuple[str, bytes | None]]
    partition: int | None = None


def offset_message_id(physical_topic: str, partition: int, offset: int) -> str:
    """RocketMQ's ``offsetMsgId`` counterpart: where the record is stored, as text."""
    return f"{physical_topic}@{partition}@{offset}"


def decode_properties(headers: list[tuple[str, bytes | None]] | None) -> dict[str, str]:
    """:func:`properties.from_headers`, with a fast path for well-formed headers.

    Consumers decode every record, so the common case is one plain loop (compiled where the
    core is built); anything unusual (a None value, bad UTF-8, a repeated name) goes
    through the validating codec, which raises the same :class:`MalformedHeaderError` as
    always.
    """
    if not headers:
        return {}
    properties = _decode_well_formed(headers)
    return props.from_headers(headers) if properties is None else properties


def decode_well_formed(headers: object) -> dict[str, str] | None:
    """The properties of ``headers`` when they are a list of ``(name, value)`` pairs, each a
    plain, distinct, UTF-8 property; None for anything else, which the validating codec
    then reads (the pure-Python reference of the core's ``decode_headers``: the same
    answer for every input, checked by ``tests/unit/test_core_parity.py``)."""
    if not isinstance(headers, list):
        return None
    properties: dict[str, str] = {}
    for pair in headers:
        if not isinstance(pair, tuple) or len(pair) != 2:
            return None
        name, value = pair
        if not isinstance(name, str) or not isinstance(value, bytes) or name in properties:
            return None
        try:
            properties[name] = value.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return properties


_decode_well_formed = decode_well_formed if CORE is None else CORE.decode_headers


_BORN_RANGE = (0, props.JAVA_LONG_MAX)
_UNIQ_KEY = props.UNIQ_KEY
#: The headers decoding reads as numbers (see the module's table).
_CHECKED = frozenset({props.BORN_TIMESTAMP, props.RECONSUME_TIME, props.FLAG})


def plain_decode(
    record: KafkaRecord, physical: str, logical: str, partition: int, offset: int
) -> MessageExt | None:
    """The common case of :meth:`TopicDecoder.decode` in one call, or None for the rest.

    The common case: the headers are None or well-formed properties
    (:func:`decode_well_formed`), and each number decoding reads (``BORN_TIMESTAMP``,
    ``RECONSUME_TIME``, ``FLAG``) is plain decimal digits within its range, so nothing is
    clamped, logged or refused. None sends the record down the general path, which
    decides the same way and names what is wrong with a poison record: this never
    decides a quarantine. The pure-Python reference of the core's ``plain_decode``
    (``tests/unit/test_core_parity.py``); the consumer's intake runs it for every record.
    """
    headers = record.headers()
    properties = {} if headers is None else decode_well_formed(headers)
    if properties is None:
        return None
    store_timestamp = record.timestamp()[1]
    born = _plain_number(properties, props.BORN_TIMESTAMP, props.JAVA_LONG_MAX, store_timestamp)
    reconsume = _plain_number(properties, props.RECONSUME_TIME, props.JAVA_INT_MAX, 0)
    flag = _plain_number(properties, props.FLAG, props.JAVA_INT_MAX, 0)
    if born is None or reconsume is None or flag is None:
        return None
    where = (physical, logical, partition, offset)
    return _message(record, where, born, store_timestamp, reconsume, properties)


def _message(
    record: KafkaRecord,
    where: tuple[str, str, int, int],
    born: int,
    store_timestamp: int,
    reconsume: int,
    properties: dict[str, str],
) -> MessageExt:
    """The :class:`MessageExt` of ``record``, read from ``where`` (physical topic, logical
    topic, partition, offset), with its decoded numbers and properties."""
    physical, logical, partition, offset = where
    # positional: about a third cheaper than keywords (field order is pinned by
    # tests/unit/test_wire.py, which checks every field)
    return MessageExt(
        logical,
        record.value() or b"",
        properties.get(_UNIQ_KEY) or offset_message_id(physical, partition, offset),
        partition,
        offset,
        born,
        store_timestamp,
        reconsume,
        properties,
        record.key(),
    )


def _plain_number(properties: dict[str, str], name: str, high: int, default: int) -> int | None:
    """The property's value when it is plain digits up to ``high``, ``default`` when it is
    absent, None for anything else (a sign, a clamp: the general path's business)."""
    text = properties.get(name)
    if text is None:
        return default
    value = props.plain_digits(text)
    return value if value is not None and value <= high else None


_plain_decode = plain_decode if CORE is None else CORE.plain_decode


@dataclass(frozen=True)
class TopicDecoder:
    """Decodes the records of one physical topic; its logical name is resolved once.

    Raises (from :meth:`of`):
        InvalidNameError: the topic is not a name rmqcompat produces.
    """

    physical: str
    logical: str

    @classmethod
    def of(cls, physical: str) -> TopicDecoder:
        return cls(physical, from_kafka_topic(physical)[1])

    def decode(self, record: KafkaRecord, partition: int, offset: int) -> MessageExt:
        """The :class:`MessageExt` of ``record`` (read at ``partition`` / ``offset``).

        Raises:
            MalformedHeaderError: a property is malformed or out of range for good (see
                the module's table).
        """
        plain = _plain_decode(record, self.physical, self.logical, partition, offset)
        if plain is not None:
            return plain
        properties = decode_properties(record.headers())
        store_timestamp = record.timestamp()[1]
        born, reconsume = store_timestamp, 0
        # one set test first: most records carry none of the checked headers, and this runs
        # for every record
        if not _CHECKED.isdisjoint(properties):
            born, reconsume = self._numbers(properties, store_timestamp, partition, offset)
        where = (self.physical, self.logical, partition, offset)
        return _message(record, where, born, store_timestamp, reconsume, properties)

    def _numbers(
        self, properties: dict[str, str], store_timestamp: int, partition: int, offset: int
    ) -> tuple[int, int]:
        """Born timestamp and reconsume count; raises for a malformed FLAG (module table)."""
        born = store_timestamp
        if props.BORN_TIMESTAMP in properties:
            born = self._clamped(
                properties, props.BORN_TIMESTAMP, _BORN_RANGE, store_timestamp, partition, offset
            )
        reconsume = 0
        if props.RECONSUME_TIME in properties:
            reconsume = self._clamped(
                properties, props.RECONSUME_TIME, props.RECONSUME_TIMES_RANGE, 0, partition, offset
            )
        if props.FLAG in properties:
            _check_flag(properties)
        return born, reconsume

    def _clamped(
        self,
        properties: dict[str, str],
        name: str,
        bounds: tuple[int, int],
        default: int,
        partition: int,
        offset: int,
    ) -> int:
        value, why = props.decode_clamped(properties, name, *bounds, default)
        if why is not None:
            _log.warning("%s[%d]@%d: %s", self.physical, partition, offset, why)
        return value


def _check_flag(properties: dict[str, str]) -> None:
    """Raises MalformedHeaderError: ``FLAG`` is not an int (see the module's table)."""
    _, out_of_range = props.decode_clamped(
        properties, props.FLAG, _JAVA_INT_MIN, props.JAVA_INT_MAX, 0
    )
    if out_of_range is not None:
        raise MalformedHeaderError(f"{out_of_range}: a flag is a Java int, quarantined")


def decode_record(record: KafkaRecord) -> MessageExt:
    """Build the :class:`MessageExt` a listener sees from a consumed record.

    The topic is the logical name of the record's topic; the retry-topic reset of
    RocketMQ is done by the consumer, which knows its group.

    Raises:
        MalformedHeaderError: headers cannot be decoded as properties.
        InvalidNameError: the record's topic is not a name rmqcompat produces.
    """
    decoder = TopicDecoder.of(record.topic() or "")
    return decoder.decode(record, record.partition() or 0, record.offset() or 0)
