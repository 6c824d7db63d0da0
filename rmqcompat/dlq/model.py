"""The read model of a dead letter: one record of ``%DLQ%<group>`` with what it says.

Derived fields (message ids, original topic, tags, keys, reconsume count, born time) are
always computed from the headers, so an exported and edited file means what its headers
say. Headers that break rmqcompat's codec (a missing value, bad UTF-8) are kept as they
are and read leniently: a dead letter must stay visible whatever it carries.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast, overload

from confluent_kafka import Message

from rmqcompat import properties as props
from rmqcompat.errors import MalformedHeaderError
from rmqcompat.wire import offset_message_id

#: Raw Kafka headers, kept byte for byte.
RawHeaders = tuple[tuple[str, bytes | None], ...]

_T = TypeVar("_T")


class _memo(Generic[_T]):  # used like the decorator it replaces
    """:func:`functools.cached_property` without its lock: Python 3.11 takes an RLock on
    every first access (measured: 3 us of the 4 a ``dlq_id`` cost), which a replay pays
    several times per dead letter. A race computes the same value twice, harmlessly."""

    def __init__(self, compute: Callable[[Any], _T]) -> None:
        self._compute = compute
        self._name = compute.__name__
        self.__doc__ = compute.__doc__

    @overload
    def __get__(self, instance: None, owner: type) -> _memo[_T]: ...
    @overload
    def __get__(self, instance: object, owner: type) -> _T: ...
    def __get__(self, instance: object | None, owner: type) -> _memo[_T] | _T:
        if instance is None:
            return self
        value = instance.__dict__[self._name] = self._compute(instance)
        return value


def _lenient(value: bytes | None) -> str:
    """A header value as text: undecodable bytes replaced, a null value empty."""
    return (value or b"").decode("utf-8", "replace")


def lenient_properties(headers: RawHeaders) -> dict[str, str]:
    """Headers as properties; undecodable bytes replaced, later repeats of a name ignored
    (built from the last header to the first, so the first of a name is written last)."""
    return {name: _lenient(value) for name, value in reversed(headers)}


@dataclass(frozen=True)
class DeadLetter:
    """One dead-letter record of ``group`` at ``dlq_topic``/``partition``/``offset``.

    ``dead_ms`` is the record's timestamp (when it was dead-lettered); ``born_ms`` the
    message's born time (``BORN_TIMESTAMP``, else ``dead_ms``).
    """

    group: str
    dlq_topic: str
    partition: int
    offset: int
    dead_ms: int
    body: bytes
    key: bytes | None
    headers: RawHeaders

    @classmethod
    def of_record(cls, group: str, record: Message) -> DeadLetter:
        return cls(
            group,
            record.topic() or "",
            record.partition() or 0,
            record.offset() or 0,
            record.timestamp()[1],
            record.value() or b"",
            record.key(),
            tuple(cast(RawHeaders, record.headers() or ())),
        )

    @_memo
    def properties(self) -> dict[str, str]:
        return lenient_properties(self.headers)

    @_memo
    def first_values(self) -> dict[str, bytes | None]:
        """Each header name's first value, undecoded (a replay reads three of them)."""
        return dict(reversed(self.headers))

    def _text(self, name: str) -> str:
        """``properties.get(name, "")``, decoding only that header."""
        return _lenient(self.first_values.get(name))

    @_memo
    def dlq_id(self) -> str:
        """Where the dead letter is stored; unique per dead-letter record."""
        return offset_message_id(self.dlq_topic, self.partition, self.offset)

    @property
    def msg_id(self) -> str:
        return self._text(props.UNIQ_KEY) or self.dlq_id

    @property
    def origin_msg_id(self) -> str:
        return self._text(props.ORIGIN_MESSAGE_ID) or self.msg_id

    @_memo  # a replay asks three times: for its destination, ahead and for the ledger
    def original_topic(self) -> str:
        """The logical topic the message was first sent to ("" if it does not say)."""
        return self._text(props.RETRY_TOPIC)

    @property
    def tags(self) -> str | None:
        return self.properties.get(props.TAGS)

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(self.properties.get(props.KEYS, "").split())

    @property
    def reconsume_times(self) -> int:
        return self._number(props.RECONSUME_TIME, props.RECONSUME_TIMES_RANGE, 0)

    @property
    def born_ms(self) -> int:
        return self._number(props.BORN_TIMESTAMP, (0, props.JAVA_LONG_MAX), self.dead_ms)

    def _number(self, name: str, bounds: tuple[int, int], default: int) -> int:
        try:
            return props.decode_clamped(self.properties, name, *bounds, default)[0]
        except MalformedHeaderError:
            return default

    def summary(self, preview: int = 60) -> dict[str, object]:
        """The fields ``dlq show`` prints (JSON-ready)."""
        return {
            "dlq_id": self.dlq_id,
            "msg_id": self.msg_id,
            "origin_msg_id": self.origin_msg_id,
            "original_topic": self.original_topic,
            "tags": self.tags,
            "keys": list(self.keys),
            "reconsume_times": self.reconsume_times,
            "born_ms": self.born_ms,
            "dead_ms": self.dead_ms,
            "body_preview": self.body[:preview].decode("utf-8", "replace"),
        }
