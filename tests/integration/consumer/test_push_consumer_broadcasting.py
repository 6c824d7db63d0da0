"""BROADCASTING: every instance gets every message; offsets in a local file (SEMANTICS 3)."""

from __future__ import annotations

import json

from consumer_helpers import LATER, OK, Recorder, create_topic, make_consumer, produce
from waiting import wait_until

from rmqcompat.consumer.listener import MessageModel
from rmqcompat.topics.naming import to_kafka_topic


def _instance(bootstrap, overrides, ns, group, topic, store, rec):
    consumer = make_consumer(
        bootstrap,
        overrides,
        ns,
        group,
        message_model=MessageModel.BROADCASTING,
        offset_store_dir=store,
    )
    consumer.subscribe(topic)
    consumer.register_message_listener(rec)
    return consumer


def test_broadcasting_instances_each_get_every_message_and_resume_from_their_file(
    kafka_bootstrap, client_overrides, namespace, unique_name, tmp_path
):
    group, topic = unique_name("g"), unique_name("T")
    create_topic(kafka_bootstrap, topic, namespace, partitions=2)
    ids = produce(kafka_bootstrap, topic, namespace, [{} for _ in range(3)], partition=0)
    ids += produce(kafka_bootstrap, topic, namespace, [{"body": b"fail"}], partition=1)
    recs = [Recorder(lambda m, c: LATER if m[0].body == b"fail" else OK) for _ in range(2)]
    args = (kafka_bootstrap, client_overrides, namespace, group, topic)
    a = _instance(*args, tmp_path / "a", recs[0])
    b = _instance(*args, tmp_path / "b", recs[1])
    with a, b:
        for rec in recs:
            wait_until(lambda rec=rec: len(rec.ids()) >= 4, what="every message on each")
    assert sorted(recs[0].ids()) == sorted(ids) == sorted(recs[1].ids())
    # failures are dropped, not retried: exactly one delivery each
    assert len(recs[0].ids()) == 4
    path = tmp_path / "a" / namespace / group / "offsets.json"
    physical = to_kafka_topic(topic, namespace)
    assert json.loads(path.read_text())["offsets"][physical] == {"0": 3, "1": 1}
    assert not path.with_name("offsets.json.tmp").exists()

    later = produce(kafka_bootstrap, topic, namespace, [{}], partition=0)
    again = Recorder()
    with _instance(*args, tmp_path / "a", again):
        wait_until(lambda: len(again.ids()) >= 1, what="the new message")
    assert again.ids() == later  # resumed from the file, nothing old again
    assert path.with_name("offsets.json.bak").exists()
