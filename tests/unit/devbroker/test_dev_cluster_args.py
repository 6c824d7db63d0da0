"""The dev cluster refuses bad arguments before any I/O, and names what is not there."""

from __future__ import annotations

import pytest

from rmqcompat.devbroker import DevBrokerError, DevCluster


def test_a_cluster_needs_a_node() -> None:
    with pytest.raises(ValueError, match="at least 1 node, got 0"):
        DevCluster(0)


def test_its_ports_must_fit() -> None:
    with pytest.raises(ValueError, match=r"ports 65531\.\.65536 do not fit"):
        DevCluster(3, port=65531)
    DevCluster(3, port=65530)  # 65530..65535: the brokers and the controllers


def test_nothing_is_served_before_start() -> None:
    cluster = DevCluster(3)
    assert cluster.nodes == () and not cluster.is_running
    with pytest.raises(DevBrokerError, match="not started"):
        _ = cluster.bootstrap_servers
    with pytest.raises(DevBrokerError, match=r"no node 1 in this cluster \(started: none\)"):
        cluster.node(1)
    cluster.stop()  # safe when nothing runs
