"""Fakes shared by tests: a trace sink that keeps events, a record sink that accepts
every send-back, a producer client that reports one outcome for every record, and dead
letters."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import KafkaError

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


class ReportingClient:
    """A stand-in for one confluent producer without a broker: every record produced is
    reported with ``error`` (None: stored) at the next poll."""

    def __init__(self, error: KafkaError | None) -> None:
        self.error = error
        self.queued: list[Any] = []
        self.produced = 0
        self.purged = 0
        self.closed = False

    def produce(  # confluent's signature, which callers may fill positionally
        self,
        _topic: str,
        _value: Any = None,
        _key: Any = None,
        _partition: int = -1,
        callback: Any = None,
        on_delivery: Any = None,  # confluent's alias of ``callback``
        _timestamp: int = 0,
        _headers: Any = None,
    ) -> None:
        self.produced += 1
        self.queued.append(callback or on_delivery)

    def poll(self, _timeout: float) -> int:
        served, self.queued = self.queued, []
        for report in served:
            report(self.error, None)
        return len(served)

    def flush(self, _timeout: float) -> int:
        self.poll(0)
        return 0

    def __len__(self) -> int:
        return len(self.queued)

    def purge(self) -> None:
        self.purged = len(self.queued)
        self.queued.clear()

    def close(self) -> None:
        self.closed = True


#: The headers of a consumer's send-back, as its dead letter carries them.
SEND_BACK_HEADERS = tuple(
    props.to_headers(
        {
            props.UNIQ_KEY: "ID0",
            props.ORIGIN_MESSAGE_ID: "ID0",
            props.RETRY_TOPIC: "Orders",
            props.RECONSUME_TIME: "17",
            props.MAX_RECONSUME_TIMES: "16",
            props.BORN_TIMESTAMP: "1700000000000",
        }
    )
)


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
