"""Offsets, flow control, consume timeout, tag filter, poison records, DLQ subscription."""

from __future__ import annotations

import threading
from datetime import timedelta

from confluent_kafka import Consumer
from consumer_fixtures import consumer_env  # noqa: F401
from consumer_helpers import LATER, LEVELS, OK, Recorder, create_topic, make_consumer
from waiting import wait_until

from rmqcompat import properties as props
from rmqcompat.closing import close_group_member
from rmqcompat.quarantine import SOURCE_OFFSET
from rmqcompat.topics.naming import QUARANTINE_TOPIC, dlq_topic, kafka_group_id


def test_commit_is_the_smallest_in_flight_offset_and_a_restart_resumes_there(env):
    ids = env.produce([{} for _ in range(5)])
    release = threading.Event()

    def behave(msgs, ctx):
        if msgs[0].msg_id == ids[1] and not release.is_set():
            release.wait(30)
        return OK

    rec = Recorder(behave)
    with env.consumer(rec, await_termination_s=0.2):
        wait_until(lambda: len(rec.ids()) == 5, what="all five delivered")
        wait_until(lambda: env.offset() == 1, what="commit of offset 1")
    # offsets 2..4 finished, yet the commit waits for the slow offset 1 even on shutdown
    assert env.offset() == 1
    again = Recorder()
    with env.consumer(again):
        wait_until(lambda: len(again.ids()) >= 4, what="redelivery from offset 1")
    release.set()
    assert again.ids() == ids[1:]
    assert env.offset() == 5


def test_flow_control_pauses_a_partition_at_the_threshold_and_loses_nothing(env):
    ids = env.produce([{} for _ in range(300)])
    release = threading.Event()
    rec = Recorder(lambda msgs, ctx: OK if release.wait(30) else LATER)
    key = (env.physical(), 0)
    settings = {"pull_threshold_for_queue": 20, "pull_batch_size": 10, "consume_thread_max": 1}
    with env.consumer(rec, **settings) as consumer:
        wait_until(lambda: consumer.stats().get(key, {}).get("paused"), what="pause")
        held = consumer.stats()[key]
        release.set()
        wait_until(lambda: len(rec.ids()) >= 300, what="all delivered after resume")
    assert held["count"] <= 20 + 10  # threshold + one fetch: memory stays bounded
    assert sorted(rec.ids()) == sorted(ids)
    assert env.offset() == 300


def test_a_paused_partition_that_comes_back_after_a_rebalance_is_fetched_again(env):
    """librdkafka keeps a partition's pause across revoke and assign: the consumer must
    resume a partition it starts afresh, or the group stalls behind its committed offset
    (seen on the cluster after a broker fault cost the members their sessions)."""
    ids = env.produce([{} for _ in range(60)])
    release = threading.Event()
    rec = Recorder(lambda msgs, ctx: OK if release.wait(30) else LATER)
    key = (env.physical(), 0)
    settings = {"pull_threshold_for_queue": 20, "pull_batch_size": 10, "consume_thread_max": 1}
    # eager assignment: another member joining revokes every partition and assigns this
    # one back to the only member subscribed to its topic
    eager = {**env.overrides, "partition.assignment.strategy": "range"}
    other = create_topic(env.bootstrap, env.topic + "Other", env.ns)
    consumer = make_consumer(env.bootstrap, eager, env.ns, env.group, **settings)
    consumer.subscribe(env.topic)
    consumer.register_message_listener(rec)
    with consumer:
        wait_until(lambda: consumer.stats().get(key, {}).get("paused"), what="pause")
        member_config = {
            **eager,
            "bootstrap.servers": env.bootstrap,
            "group.id": kafka_group_id(env.group, env.ns),
        }
        member = Consumer(member_config)
        try:
            member.subscribe([other])
            # the partition came back: its fresh state has no pause on record
            wait_until(
                lambda: (
                    member.poll(0.1) is None and consumer.stats().get(key, {}).get("pauses") == 0
                ),
                what="the partition assigned again",
            )
            release.set()
            wait_until(lambda: set(rec.ids()) >= set(ids), what="all delivered after the rebalance")
        finally:
            close_group_member(member, member_config)
    assert env.offset() == 60


def test_consume_timeout_sends_back_once_and_ignores_the_late_result(env):
    ids = env.produce([{}])
    returned = threading.Event()

    def behave(msgs, ctx):
        if msgs[0].reconsume_times == 0 and msgs[0].topic == env.topic:
            returned.wait(3.0)  # stuck longer than the 1 s consume timeout
        return OK

    with env.consumer(Recorder(behave), consume_timeout=timedelta(seconds=1)):
        parked = env.read(LEVELS.topic(3), 1)
        returned.set()
        wait_until(lambda: env.offset() == 1, what="offset past the released message")
    assert [h[props.UNIQ_KEY] for h, _ in parked] == ids
    assert parked[0][0][props.RECONSUME_TIME] == "1"
    assert len(env.read_all(LEVELS.topic(3))) == 1  # late SUCCESS changed nothing


def test_tag_filtered_messages_count_as_consumed(env):
    ids = env.produce([{"tags": "A"}, {"tags": "B"}, {"tags": "C"}, {}])
    rec = Recorder()
    with env.consumer(rec, "A || C"):
        wait_until(lambda: len(rec.ids()) >= 2, what="A and C")
        wait_until(lambda: env.offset() == 4, what="offset past filtered B and untagged")
    assert rec.ids() == [ids[0], ids[2]]


def test_poison_record_in_the_retry_topic_is_quarantined_and_flow_continues(env):
    retry = env.create_retry_topic()
    env.produce([{"raw_headers": [("TAGS", b"\xff\xfe")]}], topic=retry)
    good = env.produce([{"props": {props.RETRY_TOPIC: env.topic}}], topic=retry)
    rec = Recorder()
    with env.consumer(rec):
        wait_until(lambda: len(rec.ids()) >= 1, what="the good record")
        wait_until(lambda: env.offset(retry) == 2, what="retry offset past the poison record")
    assert rec.ids() == good
    quarantined = [
        h
        for h, _ in env.read_all(QUARANTINE_TOPIC, settle=1.0)
        if h.get("QUARANTINE_SOURCE_TOPIC") == env.physical(retry)
    ]
    assert len(quarantined) == 1 and quarantined[0][SOURCE_OFFSET] == "0"
    assert "UTF-8" in quarantined[0][props.QUARANTINE_REASON]


def test_another_group_can_subscribe_to_a_dead_letter_topic(env):
    def to_dlq(msgs, ctx):
        ctx.delay_level_when_next_consume = -1
        return LATER

    group = env.group
    ids = env.produce([{"body": b"dead"}])
    with env.consumer(Recorder(to_dlq)):
        env.read(dlq_topic(group), 1)
    rec = Recorder()
    dlq_reader = env._replace(group=group + "-dlq", topic=dlq_topic(group))
    with dlq_reader.consumer(rec):
        wait_until(lambda: len(rec.ids()) >= 1, what="the dead letter")
    msg_id, seen_topic, _, msg = rec.deliveries[0]
    assert (msg_id, seen_topic, msg.body) == (ids[0], dlq_topic(group), b"dead")
    assert msg.get_property(props.RETRY_TOPIC) == env.topic
