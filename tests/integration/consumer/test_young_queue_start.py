"""A new group on a young partition starts at 0, even with LAST (SEMANTICS 5b).

RocketMQ's broker answers a group with no offset with 0 while the queue's first message
was never removed and is still in memory; samples that send first and subscribe after
rely on it. An old, large or truncated partition still starts at its end under LAST.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Producer, TopicPartition
from confluent_kafka.admin import AdminClient
from consumer_fixtures import consumer_env  # noqa: F401
from consumer_helpers import Recorder
from waiting import wait_until

from rmqcompat import properties as props
from rmqcompat.consumer.listener import ConsumeFromWhere

LAST = ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET
HOUR_MS = 3_600_000


def _start_at_end_then_read_one_more(env, **settings) -> list[str]:
    """Start a new LAST group, wait for its committed start, produce one message: the ids
    the listener saw (only the new one when the group started at the end)."""
    rec = Recorder()
    with env.consumer(rec, consume_from_where=LAST, **settings):
        wait_until(lambda: env.offset() >= 0, what="the start position committed")
        ids = env.produce([{"body": b"after-start"}])
        wait_until(lambda: ids[0] in rec.ids(), what="the message sent after start")
    return rec.ids()


def test_a_new_group_with_last_sees_what_was_sent_just_before(env):
    ids = env.produce([{"body": b"sent-before-the-group-existed"}])
    rec = Recorder()
    with env.consumer(rec, consume_from_where=LAST):
        wait_until(lambda: rec.ids() == ids, what="the message sent before start")
    assert env.offset() == 1


def test_a_large_partition_starts_at_its_end(env):
    before = [env.produce([{}])[0] for _ in range(4)]  # separate batches (Tansu's "latest")
    seen = _start_at_end_then_read_one_more(env, young_queue_max_messages=3)
    assert not set(before) & set(seen)


def test_an_old_partition_starts_at_its_end(env, broker_kind):
    if broker_kind == "tansu":
        pytest.skip("Tansu answers every offsets_for_times lookup with 0, so no record is old")
    producer = Producer({"bootstrap.servers": env.bootstrap})
    old_id = "sent-an-hour-ago"
    producer.produce(
        env.physical(),
        b"old",
        headers=props.to_headers({props.UNIQ_KEY: old_id}),
        timestamp=int(time.time() * 1000) - HOUR_MS,
    )
    assert producer.flush(10) == 0
    assert old_id not in _start_at_end_then_read_one_more(env)


def test_a_truncated_partition_starts_at_its_end(env, broker_kind):
    if broker_kind == "tansu":
        pytest.skip("Tansu does not implement DeleteRecords (no way to truncate a log)")
    before = env.produce([{} for _ in range(3)])
    admin = AdminClient({"bootstrap.servers": env.bootstrap})
    for future in admin.delete_records([TopicPartition(env.physical(), 0, 1)]).values():
        future.result()  # offset 0 removed, as retention would
    assert not set(before) & set(_start_at_end_then_read_one_more(env))
