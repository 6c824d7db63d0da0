"""New idempotent producers ask for their producer id at once (rmqcompat.producer_id).

librdkafka holds every record of a new idempotent producer until it has its id, and
without a metadata answer after its first broker connection it asks again only on a
500 ms timer: the first send of a new client took 0.5 s. These tests bound the first
acknowledgement well under that timer (a send acknowledged on a local broker takes a few
milliseconds), so they fail if the ask is dropped, and stay far from a load flake.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import KafkaError

from rmqcompat.config import ClientConfig
from rmqcompat.consumer.sendback import RecordSink
from rmqcompat.message import Message
from rmqcompat.producer import DefaultMQProducer
from rmqcompat.producer.settings import PRODUCER_DEFAULTS
from rmqcompat.producer_id import ID_RETRY_S, new_idempotent_producer
from rmqcompat.reachability import PROBE_TOPIC
from rmqcompat.topics.naming import to_kafka_topic
from rmqcompat.transaction.ender import TransactionEnder
from rmqcompat.transaction.settings import ender as ender_settings
from rmqcompat.wire import OutgoingRecord

#: Well under librdkafka's id timer (:data:`ID_RETRY_S`), which a forgotten ask waits out.
FIRST_ACK_S = 0.4
assert FIRST_ACK_S < ID_RETRY_S


def test_a_new_idempotent_producer_has_its_first_record_acknowledged_at_once(
    kafka_bootstrap, namespace, one_queue_topic, client_overrides
):
    settings = {**PRODUCER_DEFAULTS, **client_overrides, "bootstrap.servers": kafka_bootstrap}
    producer = new_idempotent_producer(settings)
    reports = []
    producer.produce(
        to_kafka_topic(one_queue_topic, namespace),
        b"x",
        on_delivery=lambda err, _: reports.append(err),
    )
    assert producer.flush(FIRST_ACK_S) == 0
    assert reports == [None]


@pytest.mark.parametrize(
    "connect_on_start",
    [True, False],
    ids=["asked-at-start", "asked-in-the-background"],
)
def test_a_started_producers_first_sync_and_async_sends_do_not_wait_for_the_id(
    kafka_bootstrap, namespace, one_queue_topic, client_overrides, connect_on_start
):
    """Both clients (the sync sends' and the batch one of ``send_async``) ask for their ids
    when the producer starts: at ``start()``, or with ``connect_on_start=False`` (which
    asks no broker there) on a thread of its own, which the first sends right after
    ``start()`` find done."""
    with DefaultMQProducer(
        "PG",
        kafka_bootstrap,
        namespace=namespace,
        kafka_config=client_overrides,
        connect_on_start=connect_on_start,
    ) as producer:
        started = time.monotonic()
        producer.send(Message(one_queue_topic, b"sync"))
        assert time.monotonic() - started < FIRST_ACK_S
        future = producer.send_async(Message(one_queue_topic, b"async"))
        future.result(timeout=FIRST_ACK_S)


def test_a_consumers_first_send_back_is_acknowledged_at_once(
    kafka_bootstrap, namespace, one_queue_topic, client_overrides
):
    settings = {**PRODUCER_DEFAULTS, **client_overrides, "bootstrap.servers": kafka_bootstrap}
    sink = RecordSink(settings)
    try:
        outcomes: list[object] = []
        record = OutgoingRecord(to_kafka_topic(one_queue_topic, namespace), b"back", None, [])
        sink.produce(record, outcomes.append)
        deadline = time.monotonic() + FIRST_ACK_S
        while not outcomes and time.monotonic() < deadline:
            sink.poll()
            time.sleep(0.002)
        assert outcomes == [None]
    finally:
        sink.close()


def test_a_transactional_producers_start_does_not_wait_for_the_coordinator_timer(
    kafka_bootstrap, namespace, unique_name, client_overrides
):
    """``init_transactions`` looks for the coordinator with no broker connection up about
    every other time unless asked first (then 0.5 s); three starts make a miss certain
    enough: each must be quick. The first start is not timed: on a new broker it waits
    for the transaction coordinator's own topic to be created and loaded."""
    config = ClientConfig(kafka_bootstrap, namespace=namespace, kafka_config=client_overrides)
    for attempt in range(4):
        ender = TransactionEnder(ender_settings(config, unique_name("tid"), 3000), namespace, 30)
        started = time.monotonic()
        ender.start()
        try:
            assert attempt == 0 or time.monotonic() - started < FIRST_ACK_S
        finally:
            ender.close()


def test_the_ask_names_a_topic_every_broker_refuses_and_none_creates(
    kafka_bootstrap, client_overrides
):
    """A producer's metadata request may auto-create the topic it names: the ask's must be
    refused as a name, so it never leaves a topic behind."""
    settings = {**PRODUCER_DEFAULTS, **client_overrides, "bootstrap.servers": kafka_bootstrap}
    producer = new_idempotent_producer(settings)
    answer = producer.list_topics(PROBE_TOPIC, timeout=10).topics[PROBE_TOPIC]
    assert answer.error is not None
    assert answer.error.code() == KafkaError.TOPIC_EXCEPTION
    assert PROBE_TOPIC not in producer.list_topics(timeout=10).topics
