"""A Spark standalone cluster on loopback for tests: one master and its workers, started
from the installed pyspark's own launch classes and jars (``org.apache.spark.deploy.master
.Master``, ``...worker.Worker``), each JVM's log in the cluster's directory.

Every port is chosen by the JVM that binds it (port 0: no race with other processes for
a port picked in advance); the master's is read from its log. A worker launches its
executors from ``SPARK_HOME``, pyspark's folder, which has no build directories for the
launcher to take the Scala version from, so it is given as ``SPARK_SCALA_VERSION``.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyspark

from rmqcompat.java import java_on_path

#: How long the cluster may take to come up (JVMs starting on a loaded machine).
READY_S = 120.0
#: How long a JVM may take to exit after SIGTERM before it is killed.
STOP_S = 30.0
#: Heap of the master's and the workers' own JVMs (they only schedule).
DAEMON_HEAP = "256m"
#: Settings of the master's and workers' JVMs: no REST submission server (it would bind
#: the fixed port 6066), and no clean-up of finished applications' folders (the executors'
#: logs are the proof that they ran).
_DAEMON_SETTINGS = ("-Dspark.master.rest.enabled=false", "-Dspark.worker.cleanup.enabled=false")
_MASTER_URL = re.compile(r"Starting Spark master at (spark://\S+)")
_ALIVE = "I have been elected leader! New state: ALIVE"
_REGISTERED = "Successfully registered with master"


class ClusterError(RuntimeError):
    """The cluster did not come up (the message holds the end of the failing JVM's log)."""


@dataclass(frozen=True)
class StandaloneCluster:
    """A running cluster: its master's URL and each worker's folder for executors."""

    master_url: str
    work_dirs: tuple[Path, ...]

    def executor_logs(self, work_dir: Path) -> list[Path]:
        """The stderr files of the executors ``work_dir``'s worker launched
        (``app-<id>/<executor>/stderr``)."""
        return sorted(work_dir.glob("app-*/*/stderr"))


def spark_home() -> Path:
    """The installed pyspark's folder: its ``jars/`` are Spark's class path."""
    return Path(pyspark.__file__).parent


def scala_version() -> str:
    """The Scala binary version of pyspark's jars (``2.13``), from its scala-library jar."""
    (library,) = (spark_home() / "jars").glob("scala-library-*.jar")
    major, minor, *_ = library.name.removeprefix("scala-library-").split(".")
    return f"{major}.{minor}"


@contextlib.contextmanager
def standalone_cluster(
    directory: Path, *, workers: int = 2, cores: int = 1, memory: str = "1g"
) -> Iterator[StandaloneCluster]:
    """A master and ``workers`` workers on 127.0.0.1, each worker offering ``cores`` cores
    and ``memory`` to executors (an application's executors ask 1g by default: a worker
    with less launches none); logs and the workers' folders in ``directory``. Every JVM
    is stopped on exit (SIGTERM, then SIGKILL after :data:`STOP_S`).

    Raises:
        ClusterError: no ``java``, or the master or a worker did not come up within
            :data:`READY_S` (or exited first).
    """
    java = java_on_path()
    if java is None:
        raise ClusterError("no java to start Spark's master and workers with")
    directory.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "SPARK_HOME": str(spark_home()),
        "SPARK_SCALA_VERSION": scala_version(),
        "SPARK_LOCAL_IP": "127.0.0.1",
    }
    started: list[tuple[subprocess.Popen[bytes], Path]] = []

    def launch(name: str, main_class: str, *args: str) -> tuple[subprocess.Popen[bytes], Path]:
        log = directory / f"{name}.log"
        argv = [java, f"-Xmx{DAEMON_HEAP}", *_DAEMON_SETTINGS]
        argv += ["-cp", str(spark_home() / "jars" / "*"), main_class, "--host", "127.0.0.1"]
        with log.open("wb") as out:
            process = subprocess.Popen(argv + list(args), stdout=out, stderr=out, env=env)
        started.append((process, log))
        return process, log

    try:
        master = launch("master", "org.apache.spark.deploy.master.Master", "--port", "0",
                        "--webui-port", "0")  # fmt: skip
        _wait_for_line(*master, _ALIVE)
        url = _MASTER_URL.search(master[1].read_text("utf-8", "replace"))
        if url is None:
            raise ClusterError(f"the master's log names no URL: {_tail(master[1])}")
        work_dirs = tuple(directory / f"worker-{n}" for n in range(1, workers + 1))
        for work_dir in work_dirs:
            options = ["--port", "0", "--webui-port", "0", "--cores", str(cores)]
            options += ["--memory", memory, "--work-dir", str(work_dir), url.group(1)]
            launch(work_dir.name, "org.apache.spark.deploy.worker.Worker", *options)
        for worker in started[1:]:
            _wait_for_line(*worker, _REGISTERED)
        yield StandaloneCluster(url.group(1), work_dirs)
    finally:
        _stop([process for process, _ in reversed(started)])  # workers first


def _wait_for_line(process: subprocess.Popen[bytes], log: Path, line: str) -> None:
    deadline = time.monotonic() + READY_S
    while line not in log.read_text("utf-8", "replace"):
        if process.poll() is not None:
            raise ClusterError(f"{log.stem} exited ({process.returncode}): {_tail(log)}")
        if time.monotonic() > deadline:
            raise ClusterError(f"{log.stem} not up after {READY_S:.0f} s: {_tail(log)}")
        time.sleep(0.2)


def _tail(log: Path, lines: int = 20) -> str:
    return "\n".join(log.read_text("utf-8", "replace").splitlines()[-lines:])


def _stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(STOP_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
