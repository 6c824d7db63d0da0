"""The trace sink never blocks or raises, and counts every event it could not write."""

from __future__ import annotations

import threading
import time

from rmqcompat.config import ClientConfig
from rmqcompat.trace import DisabledTraceSink, KafkaTraceSink
from rmqcompat.trace.sink import producer_settings

_EVENT = {
    "event": "PUBLISH",
    "timestamp_ms": 1,
    "client_id": "c",
    "host": "h",
    "namespace": "",
    "msg_id": "m",
}
# nothing listens on port 1: every produce fails after message.timeout.ms (librdkafka's
# connection-refused logs are off: the sink's thread outlives close() by its topic
# creation's bound and would log them until the test session ends)
_UNREACHABLE = ClientConfig(
    "127.0.0.1:1",
    kafka_config={
        "message.timeout.ms": 300,
        "socket.connection.setup.timeout.ms": 1000,
        "log_level": 0,
    },
)


def test_full_buffer_drops_and_counts_without_blocking() -> None:
    sink = KafkaTraceSink(_UNREACHABLE, capacity=100)
    for _ in range(150):  # never started: nothing drains the buffer, and emit never waits
        sink.emit(_EVENT)
    stats = sink.stats()
    assert (stats.buffered, stats.dropped_full) == (100, 50)
    sink.close()  # never started: what was buffered is counted as unsent
    assert sink.stats().dropped_unsent == 100
    assert sink.stats().dropped == 150


def test_deferred_events_count_one_by_one_against_the_capacity() -> None:
    sink = KafkaTraceSink(_UNREACHABLE, capacity=10)
    encode_later = lambda n: [b""] * n  # noqa: E731 - never called: the sink is not started
    for _ in range(3):  # a listener call of 4 messages each: the third finds 8 of 10 taken
        sink.defer(encode_later, (4,), 4)
    stats = sink.stats()
    assert (stats.buffered, stats.dropped_full) == (8, 4)
    sink.close()
    assert (sink.stats().dropped_unsent, sink.stats().buffered) == (8, 0)


def test_unreachable_broker_counts_failures_and_close_returns() -> None:
    sink = KafkaTraceSink(_UNREACHABLE, capacity=1000)
    sink.start()
    for _ in range(10):
        sink.emit(_EVENT)
    sink.emit({"event": "NOT_A_TYPE", "msg_id": "x"})  # not encodable: counted, not raised
    time.sleep(1)  # the thread is still waiting for the broker to create the topic
    closing = threading.Thread(target=sink.close)
    closing.start()
    closing.join(timeout=30)  # a deadline for a failing test: close() is bounded
    assert not closing.is_alive(), "close() waits for a broker that is not there"
    stats = sink.stats()
    assert stats.written == 0
    assert stats.dropped_failed + stats.dropped_unsent == 11


def test_disabled_sink_ignores_everything() -> None:
    sink = DisabledTraceSink()
    sink.start()
    sink.emit(_EVENT)
    sink.close()
    assert not sink.enabled
    assert sink.stats().dropped == 0 and sink.stats().written == 0


def test_trace_records_are_produced_idempotently_acknowledged_by_all_and_lz4() -> None:
    """A record's events repeat their client, group and topic: lz4 (docs/trace-audit.md);
    a setting the operator passed for every client does not change these."""
    client = ClientConfig("h:1", kafka_config={"compression.type": "none", "acks": "1"})
    settings = producer_settings(client)
    assert (settings["compression.type"], settings["acks"], settings["enable.idempotence"]) == (
        "lz4",
        "all",
        True,
    )
