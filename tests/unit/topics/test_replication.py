"""Replication of the internal topics: min(3, brokers), two in sync once there are three;
business topics keep the broker's default; every kind can be set on its own."""

from __future__ import annotations

import pytest

from rmqcompat.errors import ConfigError
from rmqcompat.topics.spec import (
    BROKER_DEFAULT,
    MIN_INSYNC_REPLICAS,
    REPLICATED,
    TopicSpec,
    TopologySpec,
)
from rmqcompat.topics.topology import KINDS, build_topology, with_replication

INTERNAL = [kind for kind in KINDS if kind != "business"]


@pytest.mark.parametrize(("brokers", "replicas"), [(1, 1), (2, 2), (3, 3), (5, 3)])
def test_a_replicated_spec_gets_min_3_brokers_replicas(brokers: int, replicas: int) -> None:
    assert TopicSpec(replication_factor=REPLICATED).on_cluster(brokers).replication_factor == (
        replicas
    )


@pytest.mark.parametrize(("brokers", "in_sync"), [(1, None), (2, None), (3, "2"), (6, "2")])
def test_two_replicas_must_be_in_sync_once_there_are_three(
    brokers: int, in_sync: str | None
) -> None:
    configs = TopicSpec(replication_factor=REPLICATED).on_cluster(brokers).configs
    assert configs.get(MIN_INSYNC_REPLICAS) == in_sync


def test_a_min_insync_the_spec_sets_is_kept() -> None:
    spec = TopicSpec(replication_factor=REPLICATED, configs={MIN_INSYNC_REPLICAS: "3"})
    assert spec.on_cluster(5).configs[MIN_INSYNC_REPLICAS] == "3"


@pytest.mark.parametrize("factor", [BROKER_DEFAULT, 1, 2, 4])
def test_a_spec_with_its_own_factor_is_left_alone(factor: int) -> None:
    spec = TopicSpec(replication_factor=factor, configs={"retention.ms": "1"})
    assert spec.on_cluster(3) == spec


def test_a_cluster_that_lists_no_broker_gets_the_brokers_default() -> None:
    spec = TopicSpec(replication_factor=REPLICATED).on_cluster(0)
    assert spec.replication_factor == BROKER_DEFAULT
    assert MIN_INSYNC_REPLICAS not in spec.configs


def test_every_internal_kind_is_replicated_and_business_topics_are_the_brokers() -> None:
    topology = build_topology(
        groups=["G"], topics=["T"], transaction_groups=["P"], simple_groups=["S"]
    )
    factors = {topic.kind: topic.spec.replication_factor for topic in topology.topics}
    assert set(factors) == set(KINDS)
    assert factors == {**dict.fromkeys(INTERNAL, REPLICATED), "business": BROKER_DEFAULT}


def test_each_kind_can_be_set_on_its_own() -> None:
    spec = with_replication(TopologySpec(), {"dlq": 2, "business": REPLICATED, "trace": -1})
    assert spec.dlq.replication_factor == 2
    assert spec.business.replication_factor is REPLICATED
    assert spec.trace.replication_factor == BROKER_DEFAULT
    assert spec.retry.replication_factor is REPLICATED
    assert spec.dlq.configs == TopologySpec().dlq.configs  # only the factor changed


@pytest.mark.parametrize("factor", [0, -2])
def test_an_illegal_factor_is_refused(factor: int) -> None:
    with pytest.raises(ConfigError, match="replication_factor must be >= 1"):
        with_replication(TopologySpec(), {"dlq": factor})
