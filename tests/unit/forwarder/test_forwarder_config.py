"""Forwarder settings: group name, subscription, client settings, typed errors before I/O."""

import pytest

from rmqcompat.config import ClientConfig
from rmqcompat.errors import ConfigError, InvalidNameError
from rmqcompat.forwarder import DelayForwarder, forwarder_group
from rmqcompat.forwarder import settings as fs
from rmqcompat.message import max_record_bytes
from rmqcompat.topics.spec import MAX_MESSAGE_BYTES, TopologySpec


def test_group_is_derived_from_the_namespace() -> None:
    assert forwarder_group("") == "rmq.forwarder"
    assert forwarder_group("prod") == "prod.rmq.forwarder"


def test_level_topics_are_read_from_their_names() -> None:
    config = ClientConfig("h:1", "ns", "100ms 2s")
    topic = fs.level_topic("ns.rmq.delay.100ms")
    assert (topic.physical, topic.label, topic.delay_ms) == ("ns.rmq.delay.100ms", "100ms", 100)
    assert fs.level_topic("rmq.delay.60s").label == "1m"
    wanted = fs.internal_topology(config, TopologySpec()).names()
    assert wanted == {
        "%SCHEDULE%100ms": "ns.rmq.delay.100ms",
        "%SCHEDULE%2s": "ns.rmq.delay.2s",
        "RMQ_SYS_RECALL_TOPIC": "ns.rmq.recall",
        "RMQ_SYS_TRACE_TOPIC": "ns.rmq.trace",
        "RMQ_SYS_QUARANTINE_TOPIC": "ns.rmq.quarantine",
    }


def test_consumer_never_auto_commits_and_starts_at_the_oldest_record() -> None:
    config = ClientConfig("h:1", "ns", kafka_config={"enable.auto.commit": True, "x": 1})
    settings = fs.consumer_settings(config)
    assert settings["enable.auto.commit"] is False
    assert settings["auto.offset.reset"] == "earliest"
    assert settings["group.id"] == "ns.rmq.forwarder"
    assert settings["x"] == 1
    assert fs.producer_settings(config)["enable.idempotence"] is True


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"bootstrap_servers": ""}, ConfigError),
        ({"namespace": "bad.ns"}, InvalidNameError),
        ({"message_delay_level": "1s 1x"}, ConfigError),
        ({"metrics_port": 70000}, ConfigError),
    ],
)
def test_bad_settings_fail_in_the_constructor(kwargs: dict, error: type) -> None:
    args = {"bootstrap_servers": "127.0.0.1:1", **kwargs}
    with pytest.raises(error):
        DelayForwarder(**args)


def test_constructor_does_no_io() -> None:
    # Nothing listens on port 1: a constructor that connected would fail or hang here.
    forwarder = DelayForwarder("127.0.0.1:1", metrics_port=0)
    assert forwarder.metrics_port is None
    assert not forwarder.healthy()


def test_forwarder_topics_and_producer_fit_the_largest_body() -> None:
    # Without message.max.bytes librdkafka refuses records above 1 MB locally, and
    # Apache Kafka's topics refuse them above ~1 MiB: a 4 MiB parked body would be stuck.
    config = ClientConfig("h:1", "ns", "100ms", max_message_size=6 << 20)
    limit = max_record_bytes(6 << 20)
    assert fs.producer_settings(config)["message.max.bytes"] == limit
    wanted = fs.internal_topology(config, TopologySpec()).specs()
    assert {spec.configs[MAX_MESSAGE_BYTES] for spec in wanted.values()} == {str(limit)}


def test_an_explicit_message_max_bytes_wins_for_the_forwarder_producer() -> None:
    config = ClientConfig("h:1", kafka_config={"message.max.bytes": 2_000_000})
    assert fs.producer_settings(config)["message.max.bytes"] == 2_000_000


def test_forwarder_takes_max_message_size() -> None:
    forwarder = DelayForwarder("h:1", max_message_size=8 << 20)
    assert forwarder.config.max_message_size == 8 << 20


def test_consumer_fetches_with_a_short_wait_unless_configured() -> None:
    # librdkafka's 500 ms fetch wait shows up directly as forwarding lateness.
    assert fs.consumer_settings(ClientConfig("h:1"))["fetch.wait.max.ms"] == 100
    config = ClientConfig("h:1", kafka_config={"fetch.wait.max.ms": 20})
    assert fs.consumer_settings(config)["fetch.wait.max.ms"] == 20
