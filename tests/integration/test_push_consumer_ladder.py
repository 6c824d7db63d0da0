"""The whole retry ladder with the delay-forwarder: retries, then %DLQ%G (SEMANTICS 4, 6)."""

from __future__ import annotations

import pytest
from consumer_helpers import (
    LATER,
    OK,
    SHORT_LEVELS,
    Recorder,
    create_topic,
    make_consumer,
    produce,
    read_topic,
    wait_until,
)

from rmqcompat import properties as props

# needs the forwarder (another engineer's module); fails loudly rather than skipping
from rmqcompat.forwarder import DelayForwarder
from rmqcompat.topics.naming import dlq_topic


@pytest.fixture
def ladder(kafka_bootstrap, client_overrides, namespace, unique_name):
    forwarder = DelayForwarder(
        bootstrap_servers=kafka_bootstrap,
        namespace=namespace,
        message_delay_level=SHORT_LEVELS,
        kafka_config=client_overrides,
    )
    group, topic = unique_name("g"), unique_name("T")
    create_topic(kafka_bootstrap, topic, namespace)
    forwarder.start()
    yield kafka_bootstrap, client_overrides, namespace, group, topic
    forwarder.shutdown()


@pytest.mark.slow
def test_full_ladder_delivers_max_plus_one_times_then_dead_letters(ladder):
    bootstrap, overrides, ns, group, topic = ladder
    ids = produce(bootstrap, topic, ns, [{"body": b"always fails", "tags": "T1"}])
    rec = Recorder(lambda msgs, ctx: LATER)
    consumer = make_consumer(bootstrap, overrides, ns, group, max_reconsume_times=3)
    consumer.subscribe(topic)
    consumer.register_message_listener(rec)
    with consumer:
        (dead,) = read_topic(bootstrap, dlq_topic(group), ns, 1, timeout=60)
    # 1 delivery + 3 retries, each seen under the original topic with its count
    assert [(d[0], d[1], d[2]) for d in rec.deliveries] == [(ids[0], topic, n) for n in range(4)]
    headers, body = dead
    assert body == b"always fails"
    assert headers[props.RETRY_TOPIC] == topic
    assert headers[props.ORIGIN_MESSAGE_ID] == ids[0]
    assert headers[props.RECONSUME_TIME] == "4"
    assert headers[props.MAX_RECONSUME_TIMES] == "3"
    assert headers[props.TAGS] == "T1"
    assert props.REAL_TOPIC not in headers and props.DUE_TIME not in headers


def test_retry_succeeds_on_second_delivery_through_the_retry_topic(ladder):
    bootstrap, overrides, ns, group, topic = ladder
    ids = produce(bootstrap, topic, ns, [{}])
    rec = Recorder(lambda msgs, ctx: OK if msgs[0].reconsume_times else LATER)
    consumer = make_consumer(bootstrap, overrides, ns, group)
    consumer.subscribe(topic)
    consumer.register_message_listener(rec)
    with consumer:
        wait_until(lambda: len(rec.ids()) >= 2, timeout=30, what="the retry")
    assert [(d[0], d[1], d[2]) for d in rec.deliveries] == [(ids[0], topic, 0), (ids[0], topic, 1)]
    assert rec.deliveries[1][3].get_property(props.RETRY_TOPIC) == topic
