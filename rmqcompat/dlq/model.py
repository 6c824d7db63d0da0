"""The read model of a dead letter: one record of ``%DLQ%<group>`` with what it says.

Derived fields (message ids, original topic, tags, keys, reconsume count, born time) are
always computed from the headers, so an exported and edited file means what its headers
say. Headers that break rmqcompat's codec (a missing value, bad UTF-8) are kept as they
are and read leniently: a dead letter must stay visible whatever it carries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter
from typing import cast

from confluent_kafka import Message

from rmqcompat import properties as props
from rmqcompat.core import CORE
from rmqcompat.errors import MalformedHeaderError
from rmqcompat.wire import offset_message_id

#: Raw Kafka headers, kept byte for byte.
RawHeaders = tuple[tuple[str, bytes | None], ...]


def _lenient(value: bytes | None) -> str:
    """A header value as text: undecodable bytes replaced, a null value empty."""
    return (value or b"").decode("utf-8", "replace")


class HeaderLayout:
    """Where each header name first occurs in one sequence of header names. Dead letters
    of one group mostly carry the same names in the same order, so they share one layout:
    finding a header is an index, not a search, and the layout is where per-sequence
    facts (which headers a replay keeps) are computed once."""

    __slots__ = ("first", "ids", "names")

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        #: name -> index of its first header
        self.first: dict[str, int] = {name: i for i, name in reversed(list(enumerate(names)))}
        #: the indexes of the first ``UNIQ_KEY``, ``ORIGIN_MESSAGE_ID`` and ``RETRY_TOPIC``
        self.ids: tuple[int | None, int | None, int | None] = (
            self.first.get(props.UNIQ_KEY),
            self.first.get(props.ORIGIN_MESSAGE_ID),
            self.first.get(props.RETRY_TOPIC),
        )


#: Layouts seen so far, by names; forgotten at once when full (odd headers are rare).
#: The compiled core's :func:`decode_ids` looks layouts up here too.
LAYOUTS: dict[tuple[str, ...], HeaderLayout] = {}
_LAYOUTS_MAX = 4096
_name = itemgetter(0)


def header_layout(headers: RawHeaders) -> HeaderLayout:
    """The layout of ``headers``' names (shared with every equal sequence seen before)."""
    names = tuple(map(_name, headers))
    layout = LAYOUTS.get(names)
    if layout is None:
        if len(LAYOUTS) >= _LAYOUTS_MAX:
            LAYOUTS.clear()
        layout = LAYOUTS[names] = HeaderLayout(names)
    return layout


def lenient_properties(headers: RawHeaders) -> dict[str, str]:
    """Headers as properties; undecodable bytes replaced, later repeats of a name ignored
    (built from the last header to the first, so the first of a name is written last)."""
    return {name: _lenient(value) for name, value in reversed(headers)}


@dataclass(frozen=True, slots=True)
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
    # Derived on first use (frozen: set with object.__setattr__). Slots, not a cache in a
    # per-instance dict or tuple: a replay holds tens of thousands of dead letters with the
    # collector paused, and re-enabling it visits every container made meanwhile
    # (measured: 0.15 s after 50,000 with a dict each).
    _dlq_id: str = field(default="", init=False, repr=False, compare=False)
    _layout: HeaderLayout | None = field(default=None, init=False, repr=False, compare=False)
    _msg_id: str = field(default="", init=False, repr=False, compare=False)
    _origin_msg_id: str = field(default="", init=False, repr=False, compare=False)
    _original_topic: str = field(default="", init=False, repr=False, compare=False)
    _properties: dict[str, str] | None = field(default=None, init=False, repr=False, compare=False)

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
            tuple(cast(props.Headers, record.headers() or [])),
        )

    @property
    def properties(self) -> dict[str, str]:
        properties = self._properties
        if properties is None:
            properties = lenient_properties(self.headers)
            object.__setattr__(self, "_properties", properties)
        return properties

    @property
    def dlq_id(self) -> str:
        """Where the dead letter is stored; unique per dead-letter record."""
        dlq_id = self._dlq_id
        if not dlq_id:
            dlq_id = offset_message_id(self.dlq_topic, self.partition, self.offset)
            object.__setattr__(self, "_dlq_id", dlq_id)
        return dlq_id

    @property
    def layout(self) -> HeaderLayout:
        return self._layout or _decode_ids(self)

    @property
    def msg_id(self) -> str:
        """``UNIQ_KEY``, else where the dead letter is stored (:attr:`dlq_id`)."""
        if self._layout is None:
            _decode_ids(self)
        return self._msg_id

    @property
    def origin_msg_id(self) -> str:
        """``ORIGIN_MESSAGE_ID``, else :attr:`msg_id`."""
        if self._layout is None:
            _decode_ids(self)
        return self._origin_msg_id

    @property
    def original_topic(self) -> str:
        """The logical topic the message was first sent to (``RETRY_TOPIC``; "" if it does
        not say)."""
        if self._layout is None:
            _decode_ids(self)
        return self._original_topic

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


def decode_ids(letter: DeadLetter) -> HeaderLayout:
    """Derives ``letter``'s :attr:`~DeadLetter.layout`, :attr:`~DeadLetter.msg_id`,
    :attr:`~DeadLetter.origin_msg_id` and :attr:`~DeadLetter.original_topic` at once (a
    replay needs them all, a filter most) from one look at the headers' layout; returns
    the layout. The pure-Python reference of the core's ``decode_letter_ids``: the same
    answer for every dead letter (``tests/unit/dlq/test_replay_core_parity.py``)."""
    headers = letter.headers
    layout = header_layout(headers)
    at_msg_id, at_origin, at_original = layout.ids
    msg_id = "" if at_msg_id is None else _lenient(headers[at_msg_id][1])
    origin = "" if at_origin is None else _lenient(headers[at_origin][1])
    original = "" if at_original is None else _lenient(headers[at_original][1])
    msg_id = msg_id or letter.dlq_id
    assign = object.__setattr__
    assign(letter, "_msg_id", msg_id)
    assign(letter, "_origin_msg_id", origin or msg_id)
    assign(letter, "_original_topic", original)
    assign(letter, "_layout", layout)
    return layout


#: A replay decodes every dead letter it sends (1.5 us a letter in Python, a few tenths
#: compiled); so does every filter of ``dlq`` that looks at ids or topics.
_decode_ids = decode_ids if CORE is None else CORE.decode_letter_ids
