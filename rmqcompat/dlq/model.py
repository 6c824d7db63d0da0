"""The read model of a dead letter: one record of ``%DLQ%<group>`` with what it says.

Derived fields (message ids, original topic, tags, keys, reconsume count, born time) are
always computed from the headers, so an exported and edited file means what its headers
say. Headers that break rmqcompat's codec (a missing value, bad UTF-8) are kept as they
are and read leniently: a dead letter must stay visible whatever it carries.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import cast

from confluent_kafka import Message

from rmqcompat import properties as props
from rmqcompat.errors import MalformedHeaderError
from rmqcompat.wire import offset_message_id

#: Raw Kafka headers, kept byte for byte.
RawHeaders = tuple[tuple[str, bytes | None], ...]


def lenient_properties(headers: RawHeaders) -> dict[str, str]:
    """Headers as properties; undecodable bytes replaced, later repeats of a name ignored."""
    out: dict[str, str] = {}
    for name, value in headers:
        out.setdefault(name, (value or b"").decode("utf-8", "replace"))
    return out


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

    @cached_property
    def properties(self) -> dict[str, str]:
        return lenient_properties(self.headers)

    @cached_property
    def dlq_id(self) -> str:
        """Where the dead letter is stored; unique per dead-letter record."""
        return offset_message_id(self.dlq_topic, self.partition, self.offset)

    @property
    def msg_id(self) -> str:
        return self.properties.get(props.UNIQ_KEY) or self.dlq_id

    @property
    def origin_msg_id(self) -> str:
        return self.properties.get(props.ORIGIN_MESSAGE_ID) or self.msg_id

    @property
    def original_topic(self) -> str:
        """The logical topic the message was first sent to ("" if it does not say)."""
        return self.properties.get(props.RETRY_TOPIC, "")

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
