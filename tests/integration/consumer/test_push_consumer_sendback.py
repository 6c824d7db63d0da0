"""Send-back rules of the concurrent push consumer (SEMANTICS 1, 2, 4, 6, 9) on a real broker."""

from __future__ import annotations

import logging

from consumer_fixtures import consumer_env  # noqa: F401
from consumer_helpers import LATER, LEVELS, OK, Recorder
from waiting import wait_until

from rmqcompat import properties as props
from rmqcompat.topics.naming import dlq_topic, retry_topic


def _run(env, recorder, messages, until, **settings):
    ids = env.produce(messages)
    with env.consumer(recorder, **settings):
        wait_until(lambda: until(recorder), what="deliveries")
    return ids


def _one_batch(env, behave, size):
    """Produce ``size`` messages and consume them as one batch with ``behave``; the ids."""
    rec = Recorder(behave)
    ids = _run(
        env,
        rec,
        [{} for _ in range(size)],
        lambda r: len(r.ids()) >= size,
        consume_message_batch_max_size=size,
    )
    assert rec.batches[0] == ids  # precondition: one batch of ``size``
    return ids


def _parked(env, level, count):
    return env.read(LEVELS.topic(level), count)


def test_none_and_exception_mean_reconsume_later_and_are_logged_with_ids(env, caplog):
    def behave(msgs, ctx):
        if msgs[0].body == b"raise":
            raise ValueError("listener bug")
        return None

    rec = Recorder(behave)
    with caplog.at_level(logging.WARNING, "rmqcompat.consumer"):
        ids = _run(env, rec, [{"body": b"none"}, {"body": b"raise"}], lambda r: len(r.ids()) >= 2)
    parked = _parked(env, 3, 2)
    assert sorted(h[props.UNIQ_KEY] for h, _ in parked) == sorted(ids)
    assert all(h[props.RECONSUME_TIME] == "1" for h, _ in parked)
    assert ids[0] in caplog.text and ids[1] in caplog.text and env.group in caplog.text


def test_ack_index_in_a_batch_sends_back_only_messages_after_it(env):
    def behave(msgs, ctx):
        ctx.ack_index = 1
        return OK

    ids = _one_batch(env, behave, 4)
    parked = _parked(env, 3, 2)
    assert sorted(h[props.UNIQ_KEY] for h, _ in parked) == sorted(ids[2:])
    assert len(env.read_all(LEVELS.topic(3))) == 2


def test_reconsume_later_fails_the_whole_batch_despite_ack_index(env):
    def behave(msgs, ctx):
        ctx.ack_index = 2
        return LATER

    ids = _one_batch(env, behave, 3)
    assert sorted(h[props.UNIQ_KEY] for h, _ in _parked(env, 3, 3)) == sorted(ids)


def test_opt_in_per_message_failure_sends_back_only_marked_messages(env):
    def behave(msgs, ctx):
        ctx.fail(1)
        return LATER

    ids = _one_batch(env, behave, 3)
    parked = env.read_all(LEVELS.topic(3), settle=2.0)
    assert [h[props.UNIQ_KEY] for h, _ in parked] == [ids[1]]


def test_send_back_parks_on_level_3_plus_reconsume_times_with_rocketmq_properties(env):
    topic = env.topic
    # a message already retried twice comes back through %RETRY%G
    twice = {
        props.RETRY_TOPIC: topic,
        props.RECONSUME_TIME: "2",
        props.ORIGIN_MESSAGE_ID: "first-id",
    }
    retried = env.produce([{"props": twice, "tags": "TagA"}], topic=env.create_retry_topic())
    rec = Recorder(lambda msgs, ctx: LATER)
    fresh = _run(env, rec, [{"tags": "TagA"}], lambda r: len(r.ids()) >= 2)
    by_id = {d[0]: d for d in rec.deliveries}
    # the listener sees the original topic and how often it failed before (SEMANTICS 6)
    assert by_id[retried[0]][1:3] == (topic, 2)
    assert by_id[fresh[0]][1:3] == (topic, 0)
    (first,) = [h for h, _ in _parked(env, 3, 1)]
    assert first[props.REAL_TOPIC] == retry_topic(env.group)
    assert first[props.DELAY] == "3"
    assert first[props.RETRY_TOPIC] == topic
    assert first[props.ORIGIN_MESSAGE_ID] == fresh[0]
    assert first[props.RECONSUME_TIME] == "1"
    assert props.MAX_RECONSUME_TIMES not in first  # as RocketMQ stores it
    assert first[props.TAGS] == "TagA"
    assert props.DUE_TIME in first
    (third,) = [h for h, _ in _parked(env, 5, 1)]
    assert (third[props.RECONSUME_TIME], third[props.ORIGIN_MESSAGE_ID]) == ("3", "first-id")
    assert third[props.RETRY_TOPIC] == topic


def test_delay_level_minus_one_dead_letters_at_once_and_positive_picks_the_level(env):
    def behave(msgs, ctx):
        ctx.delay_level_when_next_consume = -1 if msgs[0].body == b"dlq" else 7
        return LATER

    rec = Recorder(behave)
    ids = _run(env, rec, [{"body": b"dlq"}, {"body": b"seven"}], lambda r: len(r.ids()) >= 2)
    (dead,) = env.read(dlq_topic(env.group), 1)
    assert dead[0][props.UNIQ_KEY] == ids[0] and dead[1] == b"dlq"
    assert dead[0][props.RETRY_TOPIC] == env.topic and dead[0][props.RECONSUME_TIME] == "1"
    (seven,) = _parked(env, 7, 1)
    assert seven[0][props.UNIQ_KEY] == ids[1]


def test_reconsume_times_at_max_goes_to_dlq_immediately(env):
    at_max = {props.RETRY_TOPIC: env.topic, props.RECONSUME_TIME: "3"}
    ids = env.produce([{"props": at_max}], topic=env.create_retry_topic())
    rec = Recorder(lambda msgs, ctx: LATER)
    _run(env, rec, [], lambda r: len(r.ids()) >= 1, max_reconsume_times=3)
    (dead,) = env.read(dlq_topic(env.group), 1)
    assert dead[0][props.UNIQ_KEY] == ids[0]
    assert dead[0][props.RECONSUME_TIME] == "4" and props.MAX_RECONSUME_TIMES not in dead[0]
    assert env.read_all(LEVELS.topic(LEVELS.max_level)) == []


def test_discard_mode_drops_exhausted_messages_and_moves_on(env):
    rec = Recorder(lambda msgs, ctx: LATER)
    _run(env, rec, [{}, {}], lambda r: len(r.ids()) >= 2, max_reconsume_times=0, dead_letter=False)
    assert env.offset() == 2
    assert env.read_all(LEVELS.topic(3)) == []
