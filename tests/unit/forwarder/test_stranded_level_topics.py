"""Every level topic of a namespace is served (issue 7 item 6), and REAL_QID (item 4)."""

import re

import pytest
from test_forwarder_plan import NOW, FakeRecord, parked, plan

from rmqcompat import properties as props
from rmqcompat.errors import TopologyError
from rmqcompat.forwarder import settings as fs
from rmqcompat.forwarder.metrics import ForwarderMetrics
from rmqcompat.forwarder.plan import Forward, Quarantine
from rmqcompat.topics.delay_levels import level_topic_pattern


@pytest.mark.parametrize(
    ("namespace", "topic", "matches"),
    [
        ("ns", "ns.rmq.delay.7s", True),
        ("ns", "ns.rmq.delay.1500ms", True),
        ("ns", "ns.rmq.delay.2h", True),
        ("ns", "ns.rmq.delay.0s", False),
        ("ns", "ns.rmq.delay.7s.x", False),
        ("ns", "other.rmq.delay.7s", False),
        ("ns", "nsXrmq.delay.7s", False),
        ("ns", "ns.rmq.retry.G", False),
        ("", "rmq.delay.10s", True),
        ("", "ns.rmq.delay.10s", False),
        ("a-b_c", "a-b_c.rmq.delay.1d", True),
    ],
)
def test_the_subscription_pattern_takes_every_level_topic_of_the_namespace(
    namespace: str, topic: str, matches: bool
) -> None:
    assert bool(re.match(level_topic_pattern(namespace), topic)) is matches
    if matches:  # whatever table parked there, the topic name gives the delay
        assert fs.level_topic(topic).delay_ms > 0


def test_unserved_level_topics_are_exported_as_metrics() -> None:
    metrics = ForwarderMetrics()
    metrics.watch_unserved(lambda: ("ns.rmq.delay.7s", "ns.rmq.delay.1h"))
    get = metrics.registry.get_sample_value
    assert get("rmqcompat_forwarder_unserved_level_topics") == 2
    assert get("rmqcompat_forwarder_unserved_level_topic", {"topic": "ns.rmq.delay.7s"}) == 1


def test_a_failed_check_exports_nothing() -> None:
    def broken() -> tuple[str, ...]:
        raise TopologyError("broker down")

    metrics = ForwarderMetrics()
    metrics.watch_unserved(broken)
    assert metrics.registry.get_sample_value("rmqcompat_forwarder_unserved_level_topics") is None


def test_forwarded_record_keeps_real_topic_and_goes_to_partition_real_qid() -> None:
    result = plan(parked(**{props.REAL_QID: "2"}))  # park() replaces it: -1
    assert isinstance(result, Forward) and result.record.partition is None
    pinned = [(props.REAL_TOPIC, b"T"), (props.REAL_QID, b"2"), (props.DUE_TIME, str(NOW).encode())]
    result = plan(FakeRecord(pinned))
    assert isinstance(result, Forward) and result.record.partition == 2
    assert dict(result.record.headers) == {props.REAL_TOPIC: b"T", props.REAL_QID: b"2"}


@pytest.mark.parametrize("qid", [b"-2", b"two"])
def test_a_malformed_real_qid_is_quarantined(qid: bytes) -> None:
    bad = [(props.REAL_TOPIC, b"T"), (props.REAL_QID, qid), (props.DUE_TIME, str(NOW).encode())]
    assert isinstance(plan(FakeRecord(bad)), Quarantine)
