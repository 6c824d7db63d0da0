"""Where a push consumer starts, and that it never skips stored messages (SEMANTICS 7).

A new group's start position is resolved to an offset and committed at once; a committed
position that is out of range is reset to the earliest record still stored (RocketMQ:
OFFSET_TOO_SMALL continues from the queue's min offset), never to the end.
"""

from __future__ import annotations

import json

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient
from consumer_fixtures import consumer_env  # noqa: F401
from consumer_helpers import Recorder
from waiting import wait_until

from rmqcompat.consumer.listener import ConsumeFromWhere, MessageModel

LAST = ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET


def _commit(env, offset):
    raw = Consumer({"bootstrap.servers": env.bootstrap, "group.id": f"{env.ns}%{env.group}"})
    try:
        tp = TopicPartition(env.physical(), 0, offset)
        raw.commit(offsets=[tp], asynchronous=False)
    finally:
        raw.close()


def test_last_offset_start_is_committed_so_a_message_produced_while_down_is_delivered(env):
    # An empty topic shows the bug on every broker: with the start left logical nothing
    # was committed, and the next owner resolved "latest" again past the new message
    # (Tansu's too-small "latest" hides it when the topic has history).
    first = Recorder()
    with env.consumer(first, consume_from_where=LAST):
        wait_until(lambda: env.offset() == 0, what="the start position committed")
    ids = env.produce([{"body": b"while-down"}])
    second = Recorder()
    with env.consumer(second, consume_from_where=LAST):
        wait_until(lambda: second.ids() == ids, what="the message produced while down")
    assert first.ids() == []


def test_broadcasting_writes_its_start_to_the_offset_file_at_once(env, tmp_path):
    settings = {
        "consume_from_where": LAST,
        "message_model": MessageModel.BROADCASTING,
        "offset_store_dir": tmp_path,
    }
    path = tmp_path / env.ns / env.group / "offsets.json"
    with env.consumer(Recorder(), **settings):
        wait_until(path.exists, what="the offset file")
    assert json.loads(path.read_text())["offsets"] == {env.physical(): {"0": 0}}
    ids = env.produce([{"body": b"while-down"}])
    again = Recorder()
    with env.consumer(again, **settings):
        wait_until(lambda: again.ids() == ids, what="the message produced while down")


def test_a_committed_offset_beyond_the_end_resets_to_the_earliest_record(env, broker_kind, caplog):
    # e.g. the topic was re-created or the broker lost its data: "latest" would skip
    # every message now stored
    if broker_kind == "tansu":
        pytest.skip(
            "Tansu answers a fetch beyond the log end with no records instead of "
            "OFFSET_OUT_OF_RANGE, so no offset reset ever happens there"
        )
    ids = env.produce([{} for _ in range(5)])
    _commit(env, 100)
    rec = Recorder()
    with env.consumer(rec, consume_from_where=LAST):
        wait_until(lambda: sorted(rec.ids()) == sorted(ids), what="every stored message")
        wait_until(lambda: env.offset() == 5, what="the commit after the reset")
    assert "out of range" in caplog.text


def test_a_committed_offset_below_the_log_start_resumes_at_the_log_start(env, broker_kind):
    if broker_kind == "tansu":
        pytest.skip("Tansu does not implement DeleteRecords (no way to truncate a log)")
    ids = env.produce([{} for _ in range(10)])
    _commit(env, 2)
    admin = AdminClient({"bootstrap.servers": env.bootstrap})
    tp = TopicPartition(env.physical(), 0, 5)
    for future in admin.delete_records([tp]).values():
        future.result()  # retention removed offsets 0..4
    rec = Recorder()
    with env.consumer(rec, consume_from_where=LAST):
        wait_until(lambda: sorted(rec.ids()) == sorted(ids[5:]), what="offsets 5..9")
