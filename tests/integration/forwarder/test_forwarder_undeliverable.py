"""A parked record the broker refuses for good is quarantined (and traced as such), and
its partition moves on."""

from __future__ import annotations

from confluent_kafka import Consumer, TopicPartition
from forwarder_helpers import create_levels, create_topics, metric, park_many, read
from waiting import wait_until

from rmqcompat import properties as props
from rmqcompat.forwarder import DelayForwarder, forwarder_group
from rmqcompat.quarantine import SOURCE_OFFSET, SOURCE_TOPIC
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.naming import TRACE_TOPIC, to_kafka_topic
from rmqcompat.topics.spec import TopicSpec
from rmqcompat.trace import decode_record

TABLE = "100ms 200ms"
LEVELS = DelayLevels.parse(TABLE)


def committed(bootstrap: str, namespace: str, topic: str) -> int:
    reader = Consumer({"bootstrap.servers": bootstrap, "group.id": forwarder_group(namespace)})
    try:
        return reader.committed([TopicPartition(topic, 0)], timeout=10)[0].offset
    finally:
        reader.close()


def test_record_for_a_deleted_topic_is_quarantined_with_its_headers_and_offsets_move_on(
    kafka_bootstrap, namespace, client_overrides
):
    # The real topic vanished after the record was parked (the producer refuses to park
    # for a missing topic). librdkafka calls a topic missing once it was absent for
    # topic.metadata.propagation.max.ms (30 s by default; 1 s keeps the test short).
    create_levels(kafka_bootstrap, namespace, LEVELS, partitions=1)
    create_topics(kafka_bootstrap, namespace, {"Orders": TopicSpec(1)})
    level_topic = f"{namespace}.rmq.delay.100ms"
    user = {"app-prop": "x", props.UNIQ_KEY: "id-gone"}
    park_many(
        kafka_bootstrap,
        namespace,
        LEVELS,
        [
            {"value": b"gone", "key": b"k", "level": 1, "real_topic": "Gone", "props": user},
            {"value": b"ok", "level": 1, "real_topic": "Orders", "props": {props.UNIQ_KEY: "o"}},
        ],
    )
    config = {
        **client_overrides,
        "allow.auto.create.topics": False,
        "topic.metadata.propagation.max.ms": 1000,
    }
    forwarder = DelayForwarder(
        kafka_bootstrap, namespace=namespace, message_delay_level=TABLE, kafka_config=config
    )
    forwarder.start()
    try:
        (ok,) = read(kafka_bootstrap, f"{namespace}.Orders", client_overrides, count=1)
        assert ok.value() == b"ok"
        (aside,) = read(kafka_bootstrap, f"{namespace}.rmq.quarantine", client_overrides, count=1)
        # Before the fix the record was retried forever and held the commit position at 0.
        wait_until(lambda: committed(kafka_bootstrap, namespace, level_topic) == 2, what="commit")
        wait_until(
            lambda: metric(forwarder, "rmqcompat_forwarder_quarantined_total", level="100ms") == 1,
            what="quarantine count",
        )
        undeliverable = [
            metric(forwarder, "rmqcompat_forwarder_undeliverable_total", level="100ms", code=code)
            for code in ("UNKNOWN_TOPIC_OR_PART", "_UNKNOWN_TOPIC")
        ]
    finally:
        forwarder.shutdown()  # writes what the trace sink holds
    assert sum(undeliverable) == 1
    assert (aside.key(), aside.value()) == (b"k", b"gone")
    headers = dict(aside.headers())
    # The parked record's own headers, so it can be repaired and parked again.
    assert headers[props.REAL_TOPIC] == b"Gone"
    assert props.DUE_TIME in headers
    assert headers["app-prop"] == b"x" and headers[props.UNIQ_KEY] == b"id-gone"
    assert b"UNKNOWN_TOPIC" in headers[props.QUARANTINE_REASON]
    assert headers[SOURCE_TOPIC] == level_topic.encode()
    assert headers[SOURCE_OFFSET] == b"0"
    # the quarantine is traced, with the parked record's id, place and the reason
    trace = to_kafka_topic(TRACE_TOPIC, namespace)
    records = read(kafka_bootstrap, trace, client_overrides)
    events = [event for r in records for event in decode_record(r.value())]
    quarantined = [e for e in events if e["event"] == "QUARANTINE"]
    assert [(e["msg_id"], e["physical_topic"], e["offset"]) for e in quarantined] == [
        ("id-gone", level_topic, 0)
    ]
    assert "UNKNOWN_TOPIC" in str(quarantined[0]["reason"])
    assert {e["msg_id"] for e in events if e["event"] == "FORWARD"} >= {"o"}
