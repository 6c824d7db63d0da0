"""The KRaft quorum an Apache Kafka dev broker belongs to: one node alone, or one of a cluster.

A cluster's nodes (:mod:`rmqcompat.devbroker.cluster`) must agree, before any of them
starts, on every voter's controller port and on one cluster id (each formats its own log
dir with it). The cluster writes each node's :class:`Quorum` into the node's data
directory; the kafka launcher reads it there, so a node is an ordinary dev broker process
and a restart finds the same quorum. A data directory without one is a lone node.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

_QUORUM_FILE = "quorum.json"
#: What a replicated cluster keeps for its internal topics: three copies, two in sync.
MAX_REPLICATION = 3
MIN_IN_SYNC_WHEN_REPLICATED = 2


def new_cluster_id() -> str:
    """A fresh KRaft cluster id (url-safe base64 of a random uuid, as Kafka's own tool)."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode("ascii").rstrip("=")


@dataclass(frozen=True)
class Quorum:
    """One node's place in a static KRaft quorum (combined broker and controller nodes).

    Attributes:
        node_id: this node's ``node.id`` (1-based).
        controller_ports: node id -> that node's controller port on loopback, every voter.
        cluster_id: the id every node of the cluster formats its log dir with.
    """

    node_id: int
    controller_ports: Mapping[int, int]
    cluster_id: str

    def __post_init__(self) -> None:
        if self.node_id not in self.controller_ports:
            raise ValueError(f"node {self.node_id} is not one of the voters")

    @property
    def size(self) -> int:
        """How many nodes (all voters) the cluster has."""
        return len(self.controller_ports)

    @property
    def controller_port(self) -> int:
        """This node's controller port."""
        return self.controller_ports[self.node_id]

    def voters(self, host: str) -> str:
        """``controller.quorum.voters``: ``1@host:port,2@host:port,...``."""
        return ",".join(f"{n}@{host}:{p}" for n, p in sorted(self.controller_ports.items()))

    def internal_replication(self) -> int:
        """Replicas of Kafka's own topics (offsets, transaction state): min(3, nodes)."""
        return min(MAX_REPLICATION, self.size)

    def internal_min_in_sync(self) -> int:
        """``min.insync.replicas`` of Kafka's own topics: 2 once they have 3 replicas."""
        return MIN_IN_SYNC_WHEN_REPLICATED if self.internal_replication() >= MAX_REPLICATION else 1

    def save(self, data_dir: Path) -> None:
        """Write this quorum into a node's data directory (read back by :func:`load`)."""
        document = {
            "node_id": self.node_id,
            "controller_ports": {str(node): port for node, port in self.controller_ports.items()},
            "cluster_id": self.cluster_id,
        }
        (data_dir / _QUORUM_FILE).write_text(json.dumps(document), encoding="utf-8")


def load(data_dir: Path) -> Quorum | None:
    """The quorum a cluster wrote into ``data_dir``, or ``None`` for a lone node."""
    path = data_dir / _QUORUM_FILE
    if not path.exists():
        return None
    document = json.loads(path.read_text(encoding="utf-8"))
    ports = {int(node): int(port) for node, port in document["controller_ports"].items()}
    return Quorum(int(document["node_id"]), ports, str(document["cluster_id"]))


def alone(controller_port: int) -> Quorum:
    """The quorum of a single-node dev broker: node 1, voter of itself, a new cluster id."""
    return Quorum(1, {1: controller_port}, new_cluster_id())
