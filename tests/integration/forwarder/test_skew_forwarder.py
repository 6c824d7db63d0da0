"""Clock skew against a real broker (issue 7 item 1): delays count from the append time.

Skewed clocks are injected into the sender (producer) and the forwarder; the assertions
compare broker timestamps: a forwarded record (stamped by the forwarder's produce) never
leaves before its parked record's timestamp + the level's delay.
"""

from __future__ import annotations

import pytest
from confluent_kafka import TIMESTAMP_LOG_APPEND_TIME
from forwarder_helpers import create_topics, now_ms, park_many, read

from rmqcompat import DefaultMQProducer, Message
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.spec import TopicSpec

TABLE = "1s 2s"
LEVELS = DelayLevels.parse(TABLE)
TANSU_IGNORES_LOG_APPEND_TIME = (
    "Tansu 0.6.0 does not enforce message.timestamp.type=LogAppendTime (TESTING.md): "
    "records keep the sender's CreateTime, so the delay counts from the sender's clock"
)


def _parked_and_forwarded(bootstrap: str, namespace: str, overrides: dict, level_topic: str):
    (forwarded,) = read(bootstrap, f"{namespace}.Orders", overrides, count=1)
    (parked,) = read(bootstrap, f"{namespace}.rmq.delay.{level_topic}", overrides, count=1)
    return parked, forwarded


def test_a_sender_clock_ten_minutes_ahead_does_not_shorten_a_level(
    kafka_bootstrap, namespace, client_overrides, broker_kind, start_forwarder
):
    if broker_kind == "tansu":
        pytest.skip(TANSU_IGNORES_LOG_APPEND_TIME)
    create_topics(kafka_bootstrap, namespace, {"Orders": TopicSpec(1)})
    start_forwarder(TABLE)
    skewed = DefaultMQProducer(
        "P",
        kafka_bootstrap,
        namespace=namespace,
        message_delay_level=TABLE,
        kafka_config=client_overrides,
        clock_ms=lambda: now_ms() + 600_000,
    )
    with skewed:
        skewed.send(Message("Orders", body=b"x", delay_time_level=1))
    parked, forwarded = _parked_and_forwarded(kafka_bootstrap, namespace, client_overrides, "1s")
    assert parked.timestamp()[0] == TIMESTAMP_LOG_APPEND_TIME
    assert forwarded.timestamp()[1] >= parked.timestamp()[1] + LEVELS.delay_ms(1)


def test_a_forwarder_clock_behind_waits_longer_never_shorter(
    kafka_bootstrap, namespace, client_overrides, start_forwarder
):
    create_topics(kafka_bootstrap, namespace, {"Orders": TopicSpec(1)})
    start_forwarder(TABLE, clock=lambda: now_ms() - 2000)
    park_many(
        kafka_bootstrap, namespace, LEVELS, [{"value": b"x", "level": 1, "real_topic": "Orders"}]
    )
    parked, forwarded = _parked_and_forwarded(kafka_bootstrap, namespace, client_overrides, "1s")
    assert forwarded.timestamp()[1] >= parked.timestamp()[1] + LEVELS.delay_ms(1)
