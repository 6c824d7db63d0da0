"""The compiled core's direct fetch (``rmqcompat.consumer.fetcher``) against confluent-kafka's
``consume()``, its reference: the same records, read both ways from a real broker, give the
same accessors and the same decoded messages, poison records included."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from consumer_fixtures import consumer_env  # noqa: F401
from consumer_helpers import OK, Recorder, create_topic
from waiting import wait_until

from rmqcompat import properties as props
from rmqcompat.consumer.fetcher import (
    ConsumeFetcher,
    DirectFetcher,
    Fetcher,
    new_fetcher,
)
from rmqcompat.consumer.intake import accept_run
from rmqcompat.core import CORE
from rmqcompat.core_plugin import with_plugin
from rmqcompat.message import MessageExt
from rmqcompat.process_queue import ProcessQueue
from rmqcompat.wire import plain_decode

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(CORE is None, reason="the direct fetch is the compiled core's"),
]

#: (key, value, headers) of records that take every branch of the decode.
RECORDS: list[tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]] | None]] = [
    (None, b"plain", [(props.UNIQ_KEY, b"id-1"), (props.TAGS, b"A")]),
    (b"k", b"", None),  # no headers, an empty body
    (None, None, [(props.UNIQ_KEY, b"id-3")]),  # no value at all
    (None, b"x", [(props.UNIQ_KEY, b"id-4"), ("KEYS", None)]),  # a header without a value
    (None, b"x", [(props.UNIQ_KEY, b"\xff\xfe")]),  # not UTF-8
    (None, b"x", [("a", b"1"), ("a", b"2")]),  # a repeated name
    (None, b"x", [(props.RECONSUME_TIME, b"99999999999")]),  # beyond the decode's bound
    (None, b"x" * 70_000, [(props.BORN_TIMESTAMP, b"17"), ("\u00e9t\u00e9", "\u00e9".encode())]),
]


def _produce(bootstrap: str, physical: str) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for key, value, headers in RECORDS:
        producer.produce(physical, value, key, partition=0, headers=headers)
    assert producer.flush(10) == 0


def _read(bootstrap: str, physical: str, direct: bool) -> list[Any]:
    """The fetches that read every record of ``RECORDS``, each as the fetch gave it."""
    config: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "group.id": f"direct-{uuid.uuid4().hex}",
        "enable.auto.commit": False,
    }
    if direct:
        config = with_plugin(config)
    consumer = Consumer(config)
    fetcher: Fetcher = new_fetcher(consumer, config)
    assert isinstance(fetcher, DirectFetcher if direct else ConsumeFetcher)
    tps = [TopicPartition(physical, 0, OFFSET_BEGINNING)]
    fetcher.route(tps)
    consumer.assign(tps)
    fetches: list[Any] = []

    def read() -> bool:
        fetched = fetcher.fetch(500, 0.2)
        if len(fetched):
            fetches.append(fetched)
        return sum(len(f) for f in fetches) >= len(RECORDS)

    try:
        wait_until(read, what="every record")
    finally:
        fetcher.close()
        consumer.close()
    return fetches


def _records(fetches: list[Any]) -> list[Any]:
    return [fetched[at] for fetched in fetches for at in range(len(fetched))]


def _runs(fetches: list[Any], physical: str, accept: Any) -> tuple[list[MessageExt], list[int]]:
    """Every fetch taken in runs by ``accept`` (an ``accept_run``): the messages taken,
    and the offsets of the records each run stopped at (then taken out by hand)."""
    taken: list[MessageExt] = []
    stopped: list[int] = []
    for fetched in fetches:
        at = 0
        while at < len(fetched):
            at = accept(fetched, at, (physical, "T", 0), ProcessQueue(), taken)
            if at < len(fetched):
                stopped.append(fetched[at].offset())
                fetched[at] = None
                at += 1
    return taken, stopped


def _seen(record: Any) -> tuple[Any, ...]:
    try:
        headers: Any = record.headers()
    except ValueError as exc:  # the decode quarantines such a record
        headers = type(exc)
    decoded = plain_decode(record, record.topic(), "T", 0, record.offset())
    core = CORE.plain_decode(record, record.topic(), "T", 0, record.offset())
    assert core == decoded  # the compiled decode of a direct record is the reference's
    return (
        record.error(),
        record.topic(),
        record.partition(),
        record.offset(),
        record.key(),
        record.value(),
        headers,
        record.timestamp(),
        decoded,
    )


@pytest.fixture(name="both")
def read_both_ways(kafka_bootstrap, namespace, unique_name) -> tuple[str, list[Any], list[Any]]:
    """``RECORDS`` in a new topic, and the fetches that read them through ``consume()``
    (the reference) and directly: ``(physical topic, reference, direct)``."""
    physical = create_topic(kafka_bootstrap, unique_name("direct"), namespace)
    _produce(kafka_bootstrap, physical)
    reference = _read(kafka_bootstrap, physical, direct=False)
    return physical, reference, _read(kafka_bootstrap, physical, direct=True)


def test_direct_records_are_read_and_decoded_as_confluent_kafka_reads_them(both):
    _, reference, direct = both
    assert type(direct[0]).__name__ == "DirectBatch"
    assert [_seen(r) for r in _records(direct)] == [_seen(r) for r in _records(reference)]


def test_runs_of_direct_records_are_taken_as_the_reference_takes_consumed_ones(both):
    physical, reference, direct = both
    taken, stopped = _runs(direct, physical, CORE.accept_run)
    assert (taken, stopped) == _runs(reference, physical, accept_run)
    assert len(taken) == 4  # the plain ones: every run of the others stops at them
    assert all(len(fetched) == 0 or fetched[0] is None for fetched in direct)


def test_a_push_consumer_reads_directly_where_the_core_is_active(env):
    ids = env.produce([{} for _ in range(20)])
    rec = Recorder(lambda msgs, ctx: OK)
    with env.consumer(rec) as consumer:
        wait_until(lambda: len(rec.ids()) == 20, what="all delivered")
        assert isinstance(consumer._engine._fetcher, DirectFetcher)
    assert sorted(rec.ids()) == sorted(ids)
