"""Fakes shared by unit tests: a trace sink that keeps events, a record sink that accepts
every send-back, and dead letters."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rmqcompat import properties as props
from rmqcompat.dlq.model import DeadLetter
from rmqcompat.trace import TraceRecord, TraceStats, decode
from rmqcompat.trace.sink import Write


@dataclass
class ListSink:
    """A trace sink that keeps events in a list (no Kafka involved: the events are the
    subject)."""

    events: list[TraceRecord] = field(default_factory=list)
    enabled: bool = True
    #: how many times the data path appended to the sink (``emit`` or ``defer``)
    appends: int = 0

    def emit(self, event: TraceRecord) -> None:
        self.appends += 1
        self.events.append(event)

    def defer(self, write: Write, args: tuple[Any, ...], events: int) -> None:
        """The events ``write`` encodes, read back: what the audit would read."""
        self.appends += 1
        encoded = list(write(*args))
        assert len(encoded) == events, f"{len(encoded)} events encoded, {events} announced"
        self.events.extend(decode(data) for data in encoded)

    def start(self) -> None:
        pass

    def close(self) -> None:
        pass

    def stats(self) -> TraceStats:
        return TraceStats(written=len(self.events))


class AcceptingSink:
    """A send-back record sink that accepts every record at once and keeps its topic."""

    def __init__(self) -> None:
        self.topics: list[str] = []

    def produce(self, record: Any, done: Callable[[Any], None]) -> None:
        self.topics.append(record.topic)
        done(None)


def dead_letters(count: int, *, origin: bool = False) -> list[DeadLetter]:
    """``count`` dead letters of group G (ids ``M<offset>``, retry topic Orders; with
    ``origin``, origin ids ``O<offset>``)."""
    return [
        DeadLetter(
            "G",
            "ns.rmq.dlq.G",
            0,
            offset,
            1000,
            b"b%d" % offset,
            None,
            (
                (props.UNIQ_KEY, b"M%d" % offset),
                *([(props.ORIGIN_MESSAGE_ID, b"O%d" % offset)] if origin else []),
                (props.RETRY_TOPIC, b"Orders"),
            ),
        )
        for offset in range(count)
    ]
