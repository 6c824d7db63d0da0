"""A subscribed topic the consumer was told does not exist is consumed within seconds once
it does.

Apache Kafka answers CreateTopics once the controller committed the topic; each broker
learns of it afterwards, so for a moment a broker that has not caught up yet (a loaded
machine, a three-node cluster) tells a consumer that subscribes then that the topic does
not exist ("Subscribed topic not available"). librdkafka looks again only at its next
metadata refresh, ``topic.metadata.refresh.interval.ms``: 5 minutes by default, during
which the group's assignment leaves the topic out. That stalled the retry path of the
ladder scenario (tests/ladder_scenario.py) on a loaded CI machine: its consumers create
and subscribe to their ``%RETRY%`` topic as they start, and when the group leader had been
told it does not exist, no member read it. A topic created after the consumer started
is the same case, made reproducible.
"""

from __future__ import annotations

from consumer_helpers import Recorder, create_topic, make_consumer, produce
from waiting import wait_until

from rmqcompat.consumer.wiring import CONSUMER_DEFAULTS

#: Well below librdkafka's 5 minutes: the refresh interval, a rebalance and a fetch.
PICKED_UP_S = CONSUMER_DEFAULTS["topic.metadata.refresh.interval.ms"] / 1000 + 20


def test_a_topic_created_after_the_consumer_subscribed_is_consumed_within_seconds(
    kafka_bootstrap, client_overrides, namespace, unique_name
):
    group, topic = unique_name("g"), unique_name("T")  # the topic does not exist yet
    rec = Recorder()
    consumer = make_consumer(kafka_bootstrap, client_overrides, namespace, group)
    consumer.subscribe(topic)
    consumer.register_message_listener(rec)
    with consumer:
        # in the group (its own retry topic assigned): it was told the topic does not exist
        wait_until(lambda: consumer.stats(), what="the consumer's own retry topic assigned")
        create_topic(kafka_bootstrap, topic, namespace)
        ids = produce(kafka_bootstrap, topic, namespace, [{} for _ in range(3)])
        wait_until(lambda: sorted(rec.ids()) == sorted(ids), PICKED_UP_S, what="the late topic")
