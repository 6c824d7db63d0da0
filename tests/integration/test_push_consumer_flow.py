"""Offsets, flow control, consume timeout, tag filter, poison records, DLQ subscription."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from consumer_helpers import (
    LATER,
    OK,
    SHORT_LEVELS,
    Recorder,
    committed,
    create_topic,
    make_consumer,
    produce,
    read_all,
    read_topic,
    wait_until,
)

from rmqcompat import properties as props
from rmqcompat.quarantine import SOURCE_OFFSET
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.naming import QUARANTINE_TOPIC, dlq_topic, retry_topic, to_kafka_topic

LEVELS = DelayLevels.parse(SHORT_LEVELS)


@pytest.fixture
def env(kafka_bootstrap, client_overrides, namespace, unique_name):
    group = unique_name("g")
    topic = unique_name("T")
    create_topic(kafka_bootstrap, topic, namespace)
    return kafka_bootstrap, client_overrides, namespace, group, topic


def _group_offset(env):
    bootstrap, _, ns, group, topic = env
    return committed(bootstrap, f"{ns}%{group}", to_kafka_topic(topic, ns))


def test_commit_is_the_smallest_in_flight_offset_and_a_restart_resumes_there(env):
    bootstrap, overrides, ns, group, topic = env
    ids = produce(bootstrap, topic, ns, [{} for _ in range(5)])
    release = threading.Event()

    def behave(msgs, ctx):
        if msgs[0].msg_id == ids[1] and not release.is_set():
            release.wait(30)
        return OK

    rec = Recorder(behave)
    consumer = make_consumer(bootstrap, overrides, ns, group, await_termination_s=0.2)
    consumer.subscribe(topic)
    consumer.register_message_listener(rec)
    with consumer:
        wait_until(lambda: len(rec.ids()) == 5, what="all five delivered")
        wait_until(lambda: _group_offset(env) == 1, what="commit of offset 1")
    # offsets 2..4 finished, yet the commit waits for the slow offset 1 even on shutdown
    assert _group_offset(env) == 1
    again = Recorder()
    consumer = make_consumer(bootstrap, overrides, ns, group)
    consumer.subscribe(topic)
    consumer.register_message_listener(again)
    with consumer:
        wait_until(lambda: len(again.ids()) >= 4, what="redelivery from offset 1")
    release.set()
    assert again.ids() == ids[1:]
    assert _group_offset(env) == 5


def test_flow_control_pauses_a_partition_at_the_threshold_and_loses_nothing(env):
    bootstrap, overrides, ns, group, topic = env
    ids = produce(bootstrap, topic, ns, [{} for _ in range(300)])
    release = threading.Event()
    rec = Recorder(lambda msgs, ctx: OK if release.wait(30) else LATER)
    consumer = make_consumer(
        bootstrap,
        overrides,
        ns,
        group,
        pull_threshold_for_queue=20,
        pull_batch_size=10,
        consume_thread_max=1,
    )
    consumer.subscribe(topic)
    consumer.register_message_listener(rec)
    key = (to_kafka_topic(topic, ns), 0)
    with consumer:
        wait_until(lambda: consumer.stats().get(key, {}).get("paused"), what="pause")
        held = consumer.stats()[key]
        release.set()
        wait_until(lambda: len(rec.ids()) >= 300, what="all delivered after resume")
    assert held["count"] <= 20 + 10  # threshold + one fetch: memory stays bounded
    assert sorted(rec.ids()) == sorted(ids)
    assert _group_offset(env) == 300


def test_consume_timeout_sends_back_once_and_ignores_the_late_result(env):
    bootstrap, overrides, ns, group, topic = env
    ids = produce(bootstrap, topic, ns, [{}])
    returned = threading.Event()

    def behave(msgs, ctx):
        if msgs[0].reconsume_times == 0 and msgs[0].topic == topic:
            returned.wait(3.0)  # stuck longer than the 1 s consume timeout
        return OK

    consumer = make_consumer(bootstrap, overrides, ns, group, consume_timeout=timedelta(seconds=1))
    consumer.subscribe(topic)
    consumer.register_message_listener(Recorder(behave))
    with consumer:
        parked = read_topic(bootstrap, LEVELS.topic(3), ns, 1)
        returned.set()
        wait_until(lambda: _group_offset(env) == 1, what="offset past the released message")
    assert [h[props.UNIQ_KEY] for h, _ in parked] == ids
    assert parked[0][0][props.RECONSUME_TIME] == "1"
    assert len(read_all(bootstrap, LEVELS.topic(3), ns)) == 1  # late SUCCESS changed nothing


def test_tag_filtered_messages_count_as_consumed(env):
    bootstrap, overrides, ns, group, topic = env
    ids = produce(bootstrap, topic, ns, [{"tags": "A"}, {"tags": "B"}, {"tags": "C"}, {}])
    rec = Recorder()
    consumer = make_consumer(bootstrap, overrides, ns, group)
    consumer.subscribe(topic, "A || C")
    consumer.register_message_listener(rec)
    with consumer:
        wait_until(lambda: len(rec.ids()) >= 2, what="A and C")
        wait_until(lambda: _group_offset(env) == 4, what="offset past filtered B and untagged")
    assert rec.ids() == [ids[0], ids[2]]


def test_poison_record_in_the_retry_topic_is_quarantined_and_flow_continues(env):
    bootstrap, overrides, ns, group, topic = env
    create_topic(bootstrap, retry_topic(group), ns)
    produce(bootstrap, retry_topic(group), ns, [{"raw_headers": [("TAGS", b"\xff\xfe")]}])
    good = produce(bootstrap, retry_topic(group), ns, [{"props": {props.RETRY_TOPIC: topic}}])
    rec = Recorder()
    consumer = make_consumer(bootstrap, overrides, ns, group)
    consumer.subscribe(topic)
    consumer.register_message_listener(rec)
    with consumer:
        wait_until(lambda: len(rec.ids()) >= 1, what="the good record")
        retry_physical = to_kafka_topic(retry_topic(group), ns)
        wait_until(
            lambda: committed(bootstrap, f"{ns}%{group}", retry_physical) == 2,
            what="retry offset past the poison record",
        )
    assert rec.ids() == good
    quarantined = [
        h
        for h, _ in read_all(bootstrap, QUARANTINE_TOPIC, ns, settle=1.0)
        if h.get("QUARANTINE_SOURCE_TOPIC") == retry_physical
    ]
    assert len(quarantined) == 1 and quarantined[0][SOURCE_OFFSET] == "0"
    assert "UTF-8" in quarantined[0][props.QUARANTINE_REASON]


def test_another_group_can_subscribe_to_a_dead_letter_topic(env):
    bootstrap, overrides, ns, group, topic = env

    def to_dlq(msgs, ctx):
        ctx.delay_level_when_next_consume = -1
        return LATER

    ids = produce(bootstrap, topic, ns, [{"body": b"dead"}])
    first = make_consumer(bootstrap, overrides, ns, group)
    first.subscribe(topic)
    first.register_message_listener(Recorder(to_dlq))
    with first:
        read_topic(bootstrap, dlq_topic(group), ns, 1)
    rec = Recorder()
    reader = make_consumer(bootstrap, overrides, ns, group + "-dlq")
    reader.subscribe(dlq_topic(group))
    reader.register_message_listener(rec)
    with reader:
        wait_until(lambda: len(rec.ids()) >= 1, what="the dead letter")
    msg_id, seen_topic, _, msg = rec.deliveries[0]
    assert (msg_id, seen_topic, msg.body) == (ids[0], dlq_topic(group), b"dead")
    assert msg.get_property(props.RETRY_TOPIC) == topic
