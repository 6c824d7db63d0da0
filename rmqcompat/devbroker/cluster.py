"""Several Apache Kafka dev brokers as one KRaft cluster on loopback (development and tests).

Each node is a :class:`DevBroker` of kind ``kafka`` (same jars and cache as the
single-node dev broker): its own JVM process, broker port, controller port and data
directory, combined broker and controller roles; every node is a voter of one static
quorum (:mod:`rmqcompat.devbroker.quorum`). The nodes start together, since none of them
serves before a majority of voters is up, and the cluster is ready once all of them
are in the metadata. Fault tests reach single nodes through :meth:`DevCluster.node` to
kill, freeze or restart them.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rmqcompat.devbroker import quorum
from rmqcompat.devbroker.errors import DevBrokerError
from rmqcompat.devbroker.ports import ensure_port_free, free_port
from rmqcompat.devbroker.process import DevBroker
from rmqcompat.devbroker.running import StartStop
from rmqcompat.devbroker.scratch import throwaway_dir

#: The three JVMs share the machine's cores while they start: more room than one node's.
_READY_TIMEOUT_S = 120.0
_METADATA_PROBE_TIMEOUT_S = 1.0


class DevCluster(StartStop):
    """``nodes`` Apache Kafka dev brokers forming one KRaft cluster on ``127.0.0.1``.

    The constructor does no I/O. :meth:`start` starts every node and blocks until the
    metadata lists all of them; :meth:`stop` ends them. Not thread-safe.

    Args:
        nodes: how many nodes (each a broker and a controller voter); 3 by default.
        port: first of ``2 * nodes`` consecutive loopback ports: the brokers listen on
            ``port .. port + nodes - 1``, the controllers on the next ``nodes``; ``None``
            picks free ports.
        data_dir: where the nodes keep their data (``node-1``, ``node-2``... inside);
            created if missing, never deleted. ``None``: a temporary directory that lives
            until :meth:`stop`.
        in_memory: without a ``data_dir``, put the temporary one in memory where the
            machine offers it (see :class:`~rmqcompat.devbroker.DevBroker`).

    Raises:
        ValueError: if ``nodes`` is below 1 or the ports do not fit in 1..65535.
        DevBrokerError: from :meth:`start` when a port is taken, Java or the jars are
            missing (:class:`DevBrokerUnavailableError`) or a node does not come up.
    """

    def __init__(
        self,
        nodes: int = 3,
        *,
        port: int | None = None,
        data_dir: str | os.PathLike[str] | None = None,
        in_memory: bool = True,
    ) -> None:
        if nodes < 1:
            raise ValueError(f"a cluster needs at least 1 node, got {nodes}")
        if port is not None and not (0 < port and port + 2 * nodes - 1 < 65536):
            raise ValueError(f"ports {port}..{port + 2 * nodes - 1} do not fit in 1..65535")
        self._size = nodes
        self._first_port = port
        self._root = Path(data_dir) if data_dir is not None else None
        self._in_memory = in_memory
        self._owns_root = False
        self._nodes: tuple[DevBroker, ...] = ()

    @property
    def nodes(self) -> tuple[DevBroker, ...]:
        """The nodes since :meth:`start`, node id 1 first; empty before."""
        return self._nodes

    def node(self, node_id: int) -> DevBroker:
        """The node whose ``node.id`` (the broker id in metadata) is ``node_id``.

        Raises:
            DevBrokerError: if the cluster is not started or has no such node.
        """
        if not 1 <= node_id <= len(self._nodes):
            raise DevBrokerError(f"no node {node_id} in this cluster (started: {self._started})")
        return self._nodes[node_id - 1]

    @property
    def bootstrap_servers(self) -> str:
        """Every node's ``127.0.0.1:PORT``, comma-separated.

        Raises:
            DevBrokerError: if the cluster has not been started.
        """
        if not self._nodes:
            raise DevBrokerError("the dev cluster is not started: call start() first")
        return ",".join(node.bootstrap_servers for node in self._nodes)

    @property
    def is_running(self) -> bool:
        """Whether any node runs (a node killed on purpose does not end the cluster)."""
        return any(node.is_running for node in self._nodes)

    def start(self) -> str:
        """Start every node and wait until the metadata lists all of them.

        Returns:
            The bootstrap servers, every node's address.

        Raises:
            DevBrokerError: see the class.
        """
        if self._nodes:
            raise DevBrokerError("the dev cluster was already started")
        try:
            self._nodes = self._plan(self._ensure_root())
            _in_parallel([node.start for node in self._nodes])
            self._wait_for_every_broker()
        except BaseException:  # Ctrl-C included: no process or temporary directory left
            self.stop()
            raise
        return self.bootstrap_servers

    def stop(self) -> None:
        """End every node; remove the temporary data directory the cluster created.

        Nodes whose data is thrown away next are killed at once; otherwise they shut down
        cleanly, all at the same time (one by one, the last ones would wait for a quorum
        that is gone). Safe to call when nothing runs.
        """
        nodes, self._nodes = self._nodes, ()
        _in_parallel([node.kill if self._owns_root else node.stop for node in nodes if node.pid])
        if self._owns_root and self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root, self._owns_root = None, False

    @property
    def _started(self) -> str:
        return f"nodes 1..{len(self._nodes)}" if self._nodes else "none"

    def _ensure_root(self) -> Path:
        if self._root is None:
            self._root = throwaway_dir("rmqcompat-kafka-cluster-", in_memory=self._in_memory)
            self._owns_root = True
        self._root.mkdir(parents=True, exist_ok=True)
        return self._root

    def _plan(self, root: Path) -> tuple[DevBroker, ...]:
        broker_ports, controller_ports = self._ports()
        node_ids = range(1, self._size + 1)
        voters = dict(zip(node_ids, controller_ports, strict=True))
        cluster_id = _existing_cluster_id(root, node_ids) or quorum.new_cluster_id()
        nodes = []
        for node_id, port in zip(node_ids, broker_ports, strict=True):
            node_dir = root / f"node-{node_id}"
            node_dir.mkdir(exist_ok=True)
            quorum.Quorum(node_id, voters, cluster_id).save(node_dir)
            nodes.append(DevBroker(port, kind="kafka", data_dir=node_dir))
        return tuple(nodes)

    def _ports(self) -> tuple[list[int], list[int]]:
        if self._first_port is None:
            ports: list[int] = []
            while len(ports) < 2 * self._size:
                candidate = free_port()
                if candidate not in ports:
                    ports.append(candidate)
        else:
            ports = list(range(self._first_port, self._first_port + 2 * self._size))
        for port in ports:
            ensure_port_free(port)
        return ports[: self._size], ports[self._size :]

    def _wait_for_every_broker(self) -> None:
        deadline = time.monotonic() + _READY_TIMEOUT_S
        while (seen := _brokers_in_metadata(self.bootstrap_servers)) < self._size:
            if time.monotonic() > deadline:
                raise DevBrokerError(
                    f"the dev cluster at {self.bootstrap_servers} listed {seen} of "
                    f"{self._size} brokers after {_READY_TIMEOUT_S:.0f} s"
                )
            time.sleep(0.1)


def _existing_cluster_id(root: Path, node_ids: range) -> str | None:
    """The cluster id a kept data directory was formatted with (a restart keeps it)."""
    for node_id in node_ids:
        found = quorum.load(root / f"node-{node_id}")
        if found is not None:
            return found.cluster_id
    return None


def _in_parallel(actions: list[Callable[[], object]]) -> None:
    """Run ``actions`` on threads, wait for all, raise the first error any raised."""
    if not actions:
        return
    with ThreadPoolExecutor(len(actions)) as pool:
        futures = [pool.submit(action) for action in actions]
    for future in futures:
        future.result()


def _brokers_in_metadata(bootstrap_servers: str) -> int:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap_servers})
    try:
        return len(admin.list_topics(timeout=_METADATA_PROBE_TIMEOUT_S).brokers)
    except KafkaException:
        return 0
