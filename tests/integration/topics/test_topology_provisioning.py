"""Provisioning and verifying the topology on a real Kafka-protocol broker."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import pytest
from click.testing import CliRunner
from confluent_kafka import KafkaError, KafkaException, TopicCollection
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

from rmqcompat.cli.context import CliContext
from rmqcompat.cli.topics_cmd import topics
from rmqcompat.message import max_record_bytes
from rmqcompat.topics import provision
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.spec import MAX_MESSAGE_BYTES, TopicSpec, TopologySpec
from rmqcompat.topics.topology import (
    Topology,
    build_topology,
    provision_topology,
    verify_topology,
    with_partitions,
)

#: Two levels keep the topology small: 2 levels + trace + quarantine + groups + topics.
LEVELS = DelayLevels.parse("1s 2s")


@pytest.fixture
def admin(kafka_bootstrap: str, client_overrides: dict[str, Any]) -> dict[str, Any]:
    return {**client_overrides, "bootstrap.servers": kafka_bootstrap}


@pytest.fixture
def make(namespace: str) -> Callable[..., Topology]:
    def _make(**kwargs: Any) -> Topology:
        kwargs.setdefault("groups", ["G"])
        kwargs.setdefault("topics", ["T"])
        kwargs.setdefault("namespace", namespace)
        return build_topology(levels=LEVELS, **kwargs)

    return _make


def test_create_twice_is_idempotent_and_verifies(
    admin: dict[str, Any], make: Callable[..., Topology]
) -> None:
    topology = make()
    physical = tuple(topic.physical for topic in topology.topics)
    first = provision_topology(admin, topology)
    assert first.created == physical and first.existing == ()
    second = provision_topology(admin, topology)
    assert second.created == () and second.existing == physical
    report = verify_topology(admin, topology)
    assert report.ok, str(report)


class _CountingAdmin(AdminClient):
    """The admin client, counting the requests for the broker's whole topic list."""

    full_lists = 0

    def list_topics(self, *args: Any, **kwargs: Any) -> Any:
        if not args and kwargs.get("topic") is None:
            _CountingAdmin.full_lists += 1
        return super().list_topics(*args, **kwargs)


def test_a_topology_that_exists_is_confirmed_without_the_whole_topic_list(
    admin: dict[str, Any], make: Callable[..., Topology], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every client start provisions its topology: once it exists, one request naming its
    topics answers, whatever else the broker holds; a topic missing from it is still
    created, after the collision check that needs the list."""
    monkeypatch.setattr(provision, "AdminClient", _CountingAdmin)
    topology = make()
    physical = tuple(topic.physical for topic in topology.topics)
    assert provision_topology(admin, topology).created == physical
    created_lists = _CountingAdmin.full_lists
    assert created_lists >= 1
    assert provision_topology(admin, topology).existing == physical
    assert _CountingAdmin.full_lists == created_lists  # asked by name only
    wider = make(topics=["T", "T2"])
    added = provision_topology(admin, wider)
    assert len(added.created) == 1 and added.created[0].endswith("T2")
    assert _CountingAdmin.full_lists > created_lists


class _ControllerGone(AdminClient):
    """The admin client, whose requests naming topics time out: librdkafka sends them to
    the broker the metadata names as the controller, which may be one that just died."""

    def describe_topics(self, topics: TopicCollection, **kwargs: Any) -> dict[str, Future[Any]]:
        futures: dict[str, Future[Any]] = {}
        for name in topics.topic_names:
            futures[name] = Future()
            futures[name].set_exception(
                KafkaException(
                    KafkaError(KafkaError._TIMED_OUT, "Timed out waiting for controller")
                )
            )
        return futures


def test_a_request_by_name_that_times_out_falls_back_to_the_topic_list(
    admin: dict[str, Any], make: Callable[..., Topology], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client starting while a broker is down still confirms (and completes) its
    topology from the list any live broker answers."""
    topology = make()
    physical = tuple(topic.physical for topic in topology.topics)
    assert provision_topology(admin, topology).created == physical
    monkeypatch.setattr(provision, "AdminClient", _ControllerGone)

    assert provision_topology(admin, topology).existing == physical
    added = provision_topology(admin, make(topics=["T", "T2"]))
    assert len(added.created) == 1 and added.created[0].endswith("T2")


def test_verify_reports_missing_topics(
    admin: dict[str, Any], make: Callable[..., Topology], namespace: str
) -> None:
    provision_topology(admin, make())
    report = verify_topology(admin, make(groups=["G", "H"]))
    missing = {(m.physical, m.problem) for m in report.mismatches}
    assert missing == {
        (f"{namespace}.rmq.retry.H", "missing"),
        (f"{namespace}.rmq.dlq.H", "missing"),
    }
    assert "rmq.retry.H" in str(report)


def test_verify_reports_wrong_partition_count(
    admin: dict[str, Any], make: Callable[..., Topology], namespace: str
) -> None:
    provision_topology(admin, make(spec=with_partitions(TopologySpec(), {"business": 1})))
    wanted = make(spec=with_partitions(TopologySpec(), {"business": 3}))
    assert provision_topology(admin, wanted).created == ()  # existing topics are left alone
    report = verify_topology(admin, wanted)
    assert [(m.physical, m.problem, m.expected, m.actual) for m in report.mismatches] == [
        (f"{namespace}.T", "partitions", "3", "1")
    ]


def test_verify_reports_a_config_that_differs(
    admin: dict[str, Any], make: Callable[..., Topology], namespace: str
) -> None:
    provision_topology(admin, make())
    other = TopologySpec(dlq=TopicSpec(partitions=1, configs={"retention.ms": "1000"}))
    report = verify_topology(admin, make(spec=other))
    assert [(m.physical, m.problem, m.actual) for m in report.mismatches] == [
        (f"{namespace}.rmq.dlq.G", "config", "-1")
    ]


def test_namespaces_isolate(
    admin: dict[str, Any], make: Callable[..., Topology], unique_name: Callable[[str], str]
) -> None:
    mine = make()
    provision_topology(admin, mine)
    theirs = make(namespace=unique_name("other"))
    report = verify_topology(admin, theirs)
    assert {m.problem for m in report.mismatches} == {"missing"}
    assert len(report.mismatches) == len(theirs.topics)
    assert provision_topology(admin, theirs).created == tuple(t.physical for t in theirs.topics)
    assert verify_topology(admin, mine).ok


def test_cli_create_then_verify(kafka_bootstrap: str, namespace: str) -> None:
    # Global options are covered by the unit tests; here the context object stands in.
    obj = CliContext(bootstrap_servers=kafka_bootstrap, namespace=namespace)
    opts = ["--group", "G", "--topic", "T", "--message-delay-level", "1s 2s"]
    runner = CliRunner()
    first = runner.invoke(topics, ["create", *opts], obj=obj)
    assert first.exit_code == 0, first.output
    assert f"created\t{namespace}.rmq.retry.G" in first.output.splitlines()
    second = runner.invoke(topics, ["create", *opts], obj=obj)
    assert second.exit_code == 0, second.output
    assert all(line.startswith("exists\t") for line in second.output.splitlines())
    assert runner.invoke(topics, ["verify", *opts], obj=obj).exit_code == 0
    bad = runner.invoke(topics, ["verify", *opts, "--partitions", "business=2"], obj=obj)
    assert bad.exit_code == 1
    assert f"{namespace}.T (T): partitions expected 2, found 4" in bad.output


def test_provisioned_topics_fit_the_max_message_size(
    admin: dict[str, Any], make: Callable[..., Topology], namespace: str
) -> None:
    # Apache Kafka's ~1 MiB default would refuse the 4 MiB bodies the producer accepts.
    size = 5 * 1024 * 1024
    topology = make(max_message_size=size)
    provision_topology(admin, topology)
    client = AdminClient(admin)
    resources = [ConfigResource(ResourceType.TOPIC, t.physical) for t in topology.topics]
    futures = client.describe_configs(resources, request_timeout=30)
    described = {r.name: futures[r].result()[MAX_MESSAGE_BYTES].value for r in resources}
    assert described == dict.fromkeys(described, str(max_record_bytes(size)))
    assert verify_topology(admin, topology).ok
    smaller = verify_topology(admin, make(max_message_size=size // 2))
    assert {m.problem for m in smaller.mismatches} == {"config"}


def test_cli_max_message_size_reaches_the_topics(kafka_bootstrap: str, namespace: str) -> None:
    obj = CliContext(bootstrap_servers=kafka_bootstrap, namespace=namespace)
    size = 3 * 1024 * 1024
    opts = ["--group", "G", "--topic", "T", "--message-delay-level", "1s"]
    runner = CliRunner()
    created = runner.invoke(topics, ["create", *opts, "--max-message-size", str(size)], obj=obj)
    assert created.exit_code == 0, created.output
    same = runner.invoke(topics, ["verify", *opts, "--max-message-size", str(size)], obj=obj)
    assert same.exit_code == 0, same.output
    default = runner.invoke(topics, ["verify", *opts], obj=obj)
    assert default.exit_code == 1
    assert "max.message.bytes" in default.output
