"""Spooled messages are re-sent with their original id and deleted only once delivered."""

from __future__ import annotations

import time

import pytest
from producer_helpers import GIVE_UP_S, by_msg_id, create_topic, headers_of, read_to_eof

from rmqcompat import properties as props
from rmqcompat.message_id import new_message_id
from rmqcompat.producer import DefaultMQProducer, Spool, SpoolEntry
from rmqcompat.topics.naming import to_kafka_topic
from rmqcompat.wire import OutgoingRecord


def spooled(spool: Spool, physical: str, count: int) -> list[str]:
    ids = []
    for i in range(count):
        msg_id = new_message_id()
        headers = props.to_headers({props.UNIQ_KEY: msg_id, props.TAGS: "S"})
        spool.put(SpoolEntry(msg_id, OutgoingRecord(physical, f"v{i}".encode(), b"k", headers), i))
        ids.append(msg_id)
    return ids


@pytest.fixture
def physical(kafka_bootstrap, namespace, unique_name) -> str:
    topic = unique_name("T")
    create_topic(kafka_bootstrap, topic, namespace, partitions=2)
    return to_kafka_topic(topic, namespace)


@pytest.fixture
def make_producer(kafka_bootstrap, namespace, client_overrides, tmp_path):
    def make(interval_s: float | None) -> DefaultMQProducer:
        return DefaultMQProducer(
            "PG",
            kafka_bootstrap,
            namespace=namespace,
            kafka_config=client_overrides,
            spool_dir=str(tmp_path),
            spool_resend_interval_s=interval_s,
        )

    return make


def test_resend_spooled_delivers_with_the_same_id_then_deletes(
    kafka_bootstrap, physical, make_producer, tmp_path
):
    spool = Spool(tmp_path)
    ids = spooled(spool, physical, 5)
    with make_producer(None) as producer:
        assert producer.resend_spooled() == (5, 0)
        assert producer.resend_spooled() == (0, 0)
    assert len(spool) == 0
    landed = by_msg_id(read_to_eof(kafka_bootstrap, physical))
    assert sorted(landed) == sorted(ids)
    assert all(headers_of(r)[props.TAGS] == "S" and r.key() == b"k" for r in landed.values())


def test_running_producer_resends_the_spool_in_the_background(
    kafka_bootstrap, physical, make_producer, tmp_path
):
    spool = Spool(tmp_path)
    ids = spooled(spool, physical, 3)
    with make_producer(0.1):
        deadline = time.monotonic() + GIVE_UP_S
        while len(spool) and time.monotonic() < deadline:
            time.sleep(0.05)
    assert len(spool) == 0
    assert sorted(by_msg_id(read_to_eof(kafka_bootstrap, physical))) == sorted(ids)
