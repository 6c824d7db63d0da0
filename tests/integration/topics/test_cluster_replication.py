"""Provisioning on the three-node cluster: every internal topic three times replicated with
two in sync, business topics as the broker says; ``topics verify`` reports a topic with
fewer replicas than asked."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from click.testing import CliRunner
from cluster_helpers import partitions
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType
from waiting import wait_until

from rmqcompat.cli.context import CliContext
from rmqcompat.cli.topics_cmd import topics
from rmqcompat.devbroker import DevCluster
from rmqcompat.message import DEFAULT_MAX_MESSAGE_SIZE
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.naming import dlq_topic
from rmqcompat.topics.provision import ensure_topics
from rmqcompat.topics.spec import MIN_INSYNC_REPLICAS, TopologySpec
from rmqcompat.topics.topology import build_topology, provision_topology, verify_topology

LEVELS = DelayLevels.parse("1s 2s")
_DEFAULTS = TopologySpec().sized_for(DEFAULT_MAX_MESSAGE_SIZE)


@pytest.fixture
def admin(kafka_cluster: DevCluster) -> dict[str, Any]:
    return {"bootstrap.servers": kafka_cluster.bootstrap_servers}


def test_internal_topics_get_three_replicas_two_in_sync(
    admin: dict[str, Any], namespace: str
) -> None:
    topology = build_topology(
        groups=["G"],
        topics=["T"],
        levels=LEVELS,
        namespace=namespace,
        transaction_groups=["P"],
        simple_groups=["S"],
    )
    provision_topology(admin, topology)

    replicas = {t.kind: _replica_counts(admin, t.physical) for t in topology.topics}
    in_sync = {t.kind: _min_insync(admin, t.physical) for t in topology.topics}
    internal = {kind for kind in replicas if kind != "business"}
    assert internal == {
        "retry", "dlq", "delay", "trace", "quarantine", "transaction", "ledger", "recall",
        "attempts",
    }  # fmt: skip
    assert all(replicas[kind] == {3} for kind in internal), replicas
    assert all(in_sync[kind] == "2" for kind in internal), in_sync
    # the application's topic: the broker's default (one replica on the dev cluster)
    assert (replicas["business"], in_sync["business"]) == ({1}, "1")
    assert verify_topology(admin, topology).ok


def test_verify_reports_a_topic_with_fewer_replicas_than_asked(
    admin: dict[str, Any], namespace: str
) -> None:
    # a DLQ someone created by hand with one replica: one lost disk loses dead letters
    by_hand = dataclasses.replace(_DEFAULTS.dlq, replication_factor=1)
    ensure_topics(admin, {dlq_topic("G"): by_hand}, namespace)
    topology = build_topology(groups=["G"], levels=LEVELS, namespace=namespace)
    provision_topology(admin, topology)

    report = verify_topology(admin, topology)

    found = [(m.physical, m.problem, m.expected, m.actual) for m in report.mismatches]
    assert (f"{namespace}.rmq.dlq.G", "replication", "3", "[1]") in found
    assert (f"{namespace}.rmq.dlq.G", "config", f"{MIN_INSYNC_REPLICAS}=2", "1") in found
    assert len(found) == 2, found


def test_cli_replication_per_kind_and_verify(kafka_cluster: DevCluster, namespace: str) -> None:
    obj = CliContext(bootstrap_servers=kafka_cluster.bootstrap_servers, namespace=namespace)
    opts = ["--group", "G", "--topic", "T", "--message-delay-level", "1s"]
    runner = CliRunner()
    two = ["--replication", "dlq=2", "--replication", "business=auto"]
    created = runner.invoke(topics, ["create", *opts, *two], obj=obj)
    assert created.exit_code == 0, created.output
    admin = {"bootstrap.servers": kafka_cluster.bootstrap_servers}
    assert _replica_counts(admin, f"{namespace}.rmq.dlq.G") == {2}
    assert _replica_counts(admin, f"{namespace}.T") == {3}
    assert runner.invoke(topics, ["verify", *opts, *two], obj=obj).exit_code == 0

    wanting_three = runner.invoke(topics, ["verify", *opts], obj=obj)

    assert wanting_three.exit_code == 1
    assert f"{namespace}.rmq.dlq.G (%DLQ%G): replication expected 3, found [2]" in (
        wanting_three.output
    )


def _replica_counts(admin: dict[str, Any], physical: str) -> set[int]:
    """The replica counts of ``physical``'s partitions, once the metadata lists it (a topic
    just created can take a moment to reach the broker that answers)."""
    found: dict[Any, Any] = {}

    def listed() -> bool:
        # kept from the answer that listed it: the next request may reach a broker that
        # has not heard of the topic yet
        found.update(partitions(admin["bootstrap.servers"], physical))
        return bool(found)

    wait_until(listed, what=physical)
    return {len(replicas) for _, replicas, _ in found.values()}


def _min_insync(admin: dict[str, Any], physical: str) -> str:
    resource = ConfigResource(ResourceType.TOPIC, physical)
    client = AdminClient(admin)
    described = client.describe_configs([resource])[resource].result(timeout=30)
    return str(described[MIN_INSYNC_REPLICAS].value)
