"""Messages larger than librdkafka's 1 MB default: sent back like any other, and a
send-back refused for good is dead-lettered at once, or reported, never looped on."""

from __future__ import annotations

import pytest
from confluent_kafka import Producer
from consumer_helpers import LATER, OK, Recorder, new_env
from waiting import wait_until

from rmqcompat import properties as props
from rmqcompat.topics.naming import dlq_topic

BIG = 2 * 1024 * 1024  # under the 4 MiB max_message_size, over the 1 MB producer default
ROOMY = {"max.message.bytes": str(8 << 20)}


@pytest.fixture
def env(kafka_bootstrap, client_overrides, namespace, unique_name):
    env = new_env(kafka_bootstrap, client_overrides, namespace, unique_name, configs=ROOMY)
    return env._replace(overrides={**env.overrides, "fetch.message.max.bytes": 8 << 20})


def _produce_big_then_small(env):
    producer = Producer({"bootstrap.servers": env.bootstrap, "message.max.bytes": 8 << 20})
    for msg_id, body in (("big", b"B" * BIG), ("small", b"s")):
        headers = props.to_headers({props.UNIQ_KEY: msg_id})
        producer.produce(env.physical(), body, headers=headers, partition=0)
    assert producer.flush(10) == 0


def test_a_2_mib_message_is_sent_back_and_dead_lettered_like_any_other(env):
    # before: the send-back producer kept librdkafka's 1 MB limit, so the message was
    # consumed locally again every few seconds, forever, pinning the offset
    _produce_big_then_small(env)
    rec = Recorder(lambda msgs, ctx: LATER if msgs[0].msg_id == "big" else OK)
    with env.consumer(rec, max_reconsume_times=0, send_back_failure_delay_s=0.2):
        wait_until(lambda: env.offset() == 2, what="commit past the big message")
    assert sorted(rec.ids()) == ["big", "small"]  # the big one was consumed once
    [(headers, body)] = env.read(dlq_topic(env.group), 1)
    assert headers[props.UNIQ_KEY] == "big" and len(body) == BIG


def test_a_send_back_refused_for_good_is_kept_in_flight_and_reported_not_looped(env):
    # the operator capped records at 1 MB: neither the retry path nor the DLQ takes it
    _produce_big_then_small(env)
    rec = Recorder(lambda msgs, ctx: LATER if msgs[0].msg_id == "big" else OK)
    capped = env._replace(overrides={**env.overrides, "message.max.bytes": 1_000_000})
    with capped.consumer(rec, max_reconsume_times=3, send_back_failure_delay_s=0.2) as consumer:
        wait_until(lambda: "big" in consumer.stuck_messages(), what="the stuck report")
        assert "too large" in consumer.stuck_messages()["big"].lower()
        assert not consumer.healthy()
        assert consumer.stats()[(env.physical(), 0)]["stuck"] == 1
        wait_until(lambda: "small" in rec.ids(), what="later messages go on")
        # in flight: the commit cannot pass it, and it is not handed out again and again
        assert env.offset() in (-1001, 0)
        assert rec.ids().count("big") == 1
