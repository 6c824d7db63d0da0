"""Parked messages of any delay table are served (issue 7 items 6 and 4, forwarder part)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from confluent_kafka import Consumer, Producer
from forwarder_helpers import create_levels, create_topics, now_ms, read
from waiting import wait_until

from rmqcompat import parking
from rmqcompat import properties as props
from rmqcompat.cli.main import main
from rmqcompat.forwarder import DelayForwarder, forwarder_group
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.spec import TopicSpec, TopologySpec
from rmqcompat.topics.topology import build_topology, verify_topology
from rmqcompat.topics.verify_forwarding import unserved_level_topics

UNSERVED = "rmqcompat_forwarder_unserved_level_topics"
TANSU_GROUP_BUG = (
    "Tansu 0.6.0 describes every consumer group as STABLE with no members, so which level "
    "topics a forwarder group consumes cannot be known there"
)


def test_a_forwarder_with_another_table_serves_the_clients_level_topics(
    kafka_bootstrap, namespace, client_overrides, broker_kind
):
    client_levels = DelayLevels.parse("300ms")
    create_levels(kafka_bootstrap, namespace, client_levels, partitions=1)
    create_topics(kafka_bootstrap, namespace, {"Orders": TopicSpec(2)})
    record = parking.park(
        b"x", None, {"u": "1"}, real_topic="Orders", level=1, levels=client_levels,
        namespace=namespace, now_ms=now_ms(), real_qid=1,
    )  # fmt: skip
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    producer.produce(record.topic, record.value, record.key, headers=record.headers)
    assert producer.flush(30) == 0
    forwarder = DelayForwarder(
        kafka_bootstrap,
        namespace=namespace,
        message_delay_level="100ms 200ms",
        kafka_config=client_overrides,
    )
    forwarder.start()
    try:
        (msg,) = read(kafka_bootstrap, f"{namespace}.Orders", client_overrides, count=1)
        registry = forwarder.metrics.registry
        if broker_kind != "tansu":  # TANSU_GROUP_BUG: the metric is not exported there
            wait_until(
                lambda: registry.get_sample_value(UNSERVED) == 0, what="all level topics served"
            )
    finally:
        forwarder.shutdown()
    assert msg.partition() == 1  # REAL_QID
    kept = {props.REAL_TOPIC: b"Orders", props.REAL_QID: b"1", props.DELAY: b"1"}
    assert dict(msg.headers()) == {"u": b"1", **kept}


def test_a_level_topic_no_forwarder_consumes_shows_in_topics_verify(
    kafka_bootstrap, namespace, client_overrides, broker_kind
):
    if broker_kind == "tansu":
        pytest.skip(TANSU_GROUP_BUG)
    create_levels(kafka_bootstrap, namespace, DelayLevels.parse("100ms 300ms"), partitions=1)
    fast, slow = f"{namespace}.rmq.delay.100ms", f"{namespace}.rmq.delay.300ms"
    admin = {"bootstrap.servers": kafka_bootstrap}
    group = forwarder_group(namespace)
    assert unserved_level_topics(admin, namespace, group) == (fast, slow)  # none runs
    # A forwarder of the old kind: subscribed by name to the level topics of its table.
    old = Consumer({**client_overrides, "bootstrap.servers": kafka_bootstrap, "group.id": group})
    old.subscribe([fast])
    try:
        wait_until(lambda: old.poll(0.1) is None and bool(old.assignment()), what="assignment")
        wait_until(
            lambda: unserved_level_topics(admin, namespace, group) == (slow,), what="described"
        )
        args = ["--bootstrap-servers", kafka_bootstrap, "--namespace", namespace]
        args += ["topics", "verify", "--message-delay-level", "100ms"]
        result = CliRunner().invoke(main, args)
    finally:
        old.close()
    warnings = [line for line in result.output.splitlines() if "consumes" in line]
    assert warnings == [f"warning: no member of forwarder group {group} consumes {slow}"]


def test_topics_verify_reports_a_level_topic_without_log_append_time(
    kafka_bootstrap, namespace, broker_kind
):
    if broker_kind == "tansu":
        pytest.skip("Tansu 0.6.0 ignores message.timestamp.type=LogAppendTime (TESTING.md)")
    levels = DelayLevels.parse("100ms")
    create_levels(kafka_bootstrap, namespace, levels, partitions=1)  # created without it
    spec = TopologySpec(delay=TopicSpec(1, configs=TopologySpec().delay.configs))
    topology = build_topology(levels=levels, spec=spec, namespace=namespace)
    report = verify_topology({"bootstrap.servers": kafka_bootstrap}, topology)
    level = f"{namespace}.rmq.delay.100ms"
    found = {(m.expected, m.actual) for m in report.mismatches if m.physical == level}
    assert ("message.timestamp.type=LogAppendTime", "CreateTime") in found
