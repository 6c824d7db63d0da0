"""One dev broker process on loopback, of any kind (:mod:`rmqcompat.devbroker.kinds`).

Development and tests only, never a runtime dependency: nothing in the SDK imports this
package; the CLI, the test fixtures and the benchmarks load it lazily.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections import deque
from pathlib import Path

from rmqcompat.devbroker.environment import environment_without
from rmqcompat.devbroker.errors import DevBrokerError
from rmqcompat.devbroker.kinds import BrokerFlavour, DevBrokerKind, flavour
from rmqcompat.devbroker.ports import HOST, accepts_connections, ensure_port_free, free_port
from rmqcompat.devbroker.running import StartStop
from rmqcompat.devbroker.scratch import throwaway_dir

_LOG_TAIL_LINES = 20
_METADATA_PROBE_TIMEOUT_S = 1.0


class DevBroker(StartStop):
    """One dev broker process (Apache Kafka, Tansu or noida-db) on ``127.0.0.1:port``.

    The constructor does no I/O. :meth:`start` spawns the process and blocks until it
    answers a metadata request; :meth:`stop` ends it. The broker's output goes to a
    temporary log file whose tail is included in start-up errors. Not thread-safe.

    Storage: ``tansu`` keeps everything in memory, so :meth:`restart` loses every topic,
    record and committed offset. ``kafka`` and ``noida`` keep them in ``data_dir`` and find
    them again after :meth:`restart`; without a ``data_dir`` they use a temporary directory
    that lives until :meth:`stop`.

    Args:
        port: loopback port to listen on; ``None`` picks a free one at the first start and
            keeps it, so :meth:`restart` comes back on the same address.
        kind: which broker, one of :data:`DEV_BROKER_KINDS`; ``"tansu"`` by default.
        data_dir: ``kafka`` and ``noida``: where it keeps its data; created if missing,
            never deleted.
        in_memory: without a ``data_dir``, put the temporary one in memory where the
            machine offers it (:func:`~rmqcompat.devbroker.scratch.throwaway_dir`): for a
            broker whose life is short, as its memory grows with every record it keeps.

    Raises:
        ValueError: if ``port`` is not a valid TCP port, ``kind`` is unknown, or a
            ``data_dir`` is given for a kind that keeps no data.
        DevBrokerError: from :meth:`start` when what the kind runs on is missing
            (:class:`DevBrokerUnavailableError`), the port is taken or the broker does not
            come up; from the signalling methods when the broker is not running.
    """

    def __init__(
        self,
        port: int | None = None,
        *,
        kind: DevBrokerKind = "tansu",
        data_dir: str | os.PathLike[str] | None = None,
        in_memory: bool = True,
    ) -> None:
        if port is not None and not 0 < port < 65536:
            raise ValueError(f"port must be in 1..65535, got {port}")
        self._flavour: BrokerFlavour = flavour(kind)
        if data_dir is not None and not self._flavour.keeps_data:
            raise ValueError(f"the {kind} dev broker keeps no data, so it takes no data_dir")
        self._port = port
        self._data_dir = Path(data_dir) if data_dir is not None else None
        self._in_memory = in_memory
        self._owns_data_dir = False
        self._process: subprocess.Popen[bytes] | None = None
        self._log_path: Path | None = None

    @property
    def kind(self) -> DevBrokerKind:
        """Which broker this is: ``"kafka"``, ``"tansu"`` or ``"noida"``."""
        return self._flavour.kind

    @property
    def data_dir(self) -> Path | None:
        """Where the broker keeps its data (once started or if given), else ``None``."""
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

    def start(self, timeout_s: float | None = None) -> str:
        """Spawn the broker and wait until it answers a metadata request, at most
        ``timeout_s`` (default: the kind's start timeout).

        The first start of the ``kafka`` kind fetches its jars from Maven Central (once per
        machine and version; see :mod:`rmqcompat.devbroker.apache_kafka`).

        Returns:
            The bootstrap servers string ``"127.0.0.1:PORT"``.

        Raises:
            DevBrokerUnavailableError: if what the kind runs on (its wheel, Java, Maven, the
                network for the first fetch) is missing; the message says how to get it.
            DevBrokerError: if it was started and not stopped, the port is in use, or the
                broker exits or does not answer within the kind's start timeout.
        """
        if self._process is not None:
            raise DevBrokerError(f"the dev broker was already started (pid {self._process.pid})")
        if self._port is None:
            self._port = free_port()
        ensure_port_free(self._port)
        try:
            self._spawn(self._flavour.launch(HOST, self._port, self._ensure_data_dir()))
            wait_s = self._flavour.start_timeout_s if timeout_s is None else timeout_s
            self._wait_until_serving(wait_s)
        except BaseException:  # Ctrl-C included: no process or temporary directory left
            self.stop()
            raise
        return self.bootstrap_servers

    def stop(self) -> None:
        """End the broker; remove its log and the temporary data directory it created.

        SIGINT, then SIGKILL after a grace period (5 s Tansu, 30 s Kafka, 60 s noida, which
        saves its data first); a broker whose temporary data directory goes next is killed at once.
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

        ``tansu`` comes back empty; ``kafka`` and ``noida`` still have their topics,
        records and offsets.
        """
        self._stop_process(keep_data=True)
        return self.start()

    def kill(self) -> None:
        """End the broker at once (SIGKILL), as a crash would: no clean shutdown.

        Its data directory stays: :meth:`start` brings it back on the same port, with its
        data for the kinds that keep some.

        Raises:
            DevBrokerError: if the broker is not running.
        """
        self._running_process()
        self._stop_process(keep_data=False)

    def freeze(self) -> None:
        """Suspend the broker (SIGSTOP): it keeps its sockets but answers nothing."""
        self._signal(signal.SIGSTOP)

    def thaw(self) -> None:
        """Resume a frozen broker (SIGCONT)."""
        self._signal(signal.SIGCONT)

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

    def _spawn(self, argv: list[str]) -> None:
        fd, name = tempfile.mkstemp(prefix=f"rmqcompat-{self.kind}-", suffix=".log")
        self._log_path = Path(name)
        with os.fdopen(fd, "wb") as log:
            self._process = subprocess.Popen(  # noqa: S603 - fixed argv, no shell
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=environment_without(self._flavour.hidden_env),
                # Own session: a Ctrl-C in the terminal reaches only our process, which then
                # stops the broker in order instead of both dying at once.
                start_new_session=True,
            )

    def _ensure_data_dir(self) -> Path | None:
        if not self._flavour.keeps_data:
            return None
        if self._data_dir is None:
            prefix = f"rmqcompat-{self.kind}-data-"
            self._data_dir = throwaway_dir(prefix, in_memory=self._in_memory)
            self._owns_data_dir = True
        self._data_dir.mkdir(parents=True, exist_ok=True)
        return self._data_dir

    def _wait_until_serving(self, timeout_s: float) -> None:
        # A port that accepts connections is not enough: Apache Kafka binds its listener
        # before it has joined its own quorum, and answers nothing until it is unfenced.
        deadline = time.monotonic() + timeout_s
        while not accepts_connections(self._port_or_fail()):
            self._fail_if_exited()
            if time.monotonic() > deadline:
                raise DevBrokerError(
                    f"the dev broker did not accept connections on {self.bootstrap_servers} "
                    f"within {timeout_s:.0f} s{self._log_tail()}"
                )
            time.sleep(0.01)
        while not _answers_metadata(self.bootstrap_servers):
            self._fail_if_exited()
            if time.monotonic() > deadline:
                raise DevBrokerError(
                    f"the dev broker on {self.bootstrap_servers} did not answer a metadata "
                    f"request within {timeout_s:.0f} s{self._log_tail()}"
                )
        # The port could in theory belong to someone else; make sure we did not die.
        self._fail_if_exited()

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


def _answers_metadata(bootstrap_servers: str) -> bool:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap_servers})
    try:
        return bool(admin.list_topics(timeout=_METADATA_PROBE_TIMEOUT_S).brokers)
    except KafkaException:
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
