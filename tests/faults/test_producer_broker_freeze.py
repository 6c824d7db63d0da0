"""The broker freezes (SIGSTOP) for 5 s during 1000 async sends: nothing is lost.

Uses its own dev broker, not the session's: freezing a shared broker would stall every
test running beside this one.
"""

from __future__ import annotations

import collections
import threading
import time

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

from rmqcompat import properties as props
from rmqcompat.devbroker import DevBroker
from rmqcompat.message import Message
from rmqcompat.producer import Backoff, DefaultMQProducer, SendResult, SendStatus, Spool
from rmqcompat.topics.naming import to_kafka_topic
from rmqcompat.topics.provision import ensure_topics
from rmqcompat.topics.spec import TopicSpec

TOTAL = 1000
BEFORE_FREEZE = 300
FREEZE_S = 5.0
GIVE_UP_S = 90.0


@pytest.fixture
def own_broker():
    with DevBroker() as broker:
        yield broker


def ids_in_topic(bootstrap: str, physical: str) -> list[str]:
    """UNIQ_KEY of every record, read from the beginning to the end-of-partition events."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "freeze-reader",
            "enable.partition.eof": True,
            "enable.auto.commit": False,
        }
    )
    try:
        partitions = consumer.list_topics(physical, timeout=10).topics[physical].partitions
        consumer.assign([TopicPartition(physical, p, OFFSET_BEGINNING) for p in partitions])
        waiting, ids = set(partitions), []
        deadline = time.monotonic() + GIVE_UP_S
        while waiting and time.monotonic() < deadline:
            record = consumer.poll(0.2)
            if record is None:
                continue
            if record.error() is None:
                ids.append(props.from_headers(record.headers())[props.UNIQ_KEY])
            elif record.error().code() == KafkaError._PARTITION_EOF:
                waiting.discard(record.partition())
        assert not waiting, f"no end-of-partition event for {waiting}"
        return ids
    finally:
        consumer.close()


class Outcomes:
    """Every callback invocation, per send."""

    def __init__(self) -> None:
        self.calls: dict[int, list[object]] = collections.defaultdict(list)
        self.lock = threading.Lock()

    def callback(self, index: int):
        def record(outcome: object) -> None:
            with self.lock:
                self.calls[index].append(outcome)

        return record


@pytest.mark.slow
def test_frozen_broker_loses_nothing_during_async_sends(
    own_broker, client_overrides, unique_name, tmp_path
):
    bootstrap = own_broker.bootstrap_servers
    topic = unique_name("Freeze")
    ensure_topics({"bootstrap.servers": bootstrap}, {topic: TopicSpec(4)}, "")
    outcomes = Outcomes()
    producer = DefaultMQProducer(
        "FreezePG",
        bootstrap,
        kafka_config=client_overrides,
        send_msg_timeout=1500,
        retry_times_when_send_async_failed=1,
        backoff=Backoff(initial_s=0.05, max_s=0.2),
        spool_dir=str(tmp_path),
        spool_resend_interval_s=0.5,
    )
    with producer:
        futures = [
            producer.send_async(Message(topic, f"m{i}".encode()), callback=outcomes.callback(i))
            for i in range(BEFORE_FREEZE)
        ]
        futures[-1].result(timeout=GIVE_UP_S)  # the client is connected and producing
        own_broker.freeze()
        try:
            futures += [
                producer.send_async(Message(topic, f"m{i}".encode()), callback=outcomes.callback(i))
                for i in range(BEFORE_FREEZE, TOTAL)
            ]
            # the freeze outlasts two attempts of 1.5 s: those sends must end in the spool
            time.sleep(FREEZE_S)
        finally:
            own_broker.thaw()
        results: list[SendResult] = [f.result(timeout=GIVE_UP_S) for f in futures]
        deadline = time.monotonic() + GIVE_UP_S
        while len(Spool(tmp_path)) and time.monotonic() < deadline:
            time.sleep(0.1)  # the background re-send empties the spool
    assert len(Spool(tmp_path)) == 0, "spooled messages were not all re-sent"

    assert sorted(outcomes.calls) == list(range(TOTAL))
    assert all(len(calls) == 1 for calls in outcomes.calls.values()), "a callback fired twice"
    assert [outcomes.calls[i][0] for i in range(TOTAL)] == results
    spooled = [r for r in results if r.send_status is SendStatus.SPOOLED]
    retried = [r for r in results if r.send_status is SendStatus.SEND_OK and r.attempts > 1]
    assert spooled, "the freeze outlasted every attempt, so some sends must have been spooled"

    landed = collections.Counter(ids_in_topic(bootstrap, to_kafka_topic(topic)))
    missing = {r.msg_id for r in results} - set(landed)
    duplicates = sum(count - 1 for count in landed.values())
    print(
        f"\nfreeze: {TOTAL} sends, {len(spooled)} spooled and re-sent, {len(retried)} "
        f"delivered after a retry, {duplicates} duplicate records in the topic"
    )
    assert not missing, f"{len(missing)} messages lost"
    assert set(landed) == {r.msg_id for r in results}
    # a duplicate can only come from re-producing a record that timed out but was stored
    assert duplicates <= len(spooled) + sum(r.attempts - 1 for r in retried)
