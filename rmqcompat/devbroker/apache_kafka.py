"""Apache Kafka itself as a dev broker: jars from Maven Central, KRaft nodes on loopback.

The first use resolves ``org.apache.kafka:kafka_2.13`` at :data:`KAFKA_VERSION` with its
runtime dependencies (about 45 MB) into a versioned cache directory with Maven, once; later
starts need neither Maven nor the network. Each broker then gets its own data directory
with a ``server.properties`` (combined broker and controller, a static quorum: one voter,
or every node of a cluster, :mod:`rmqcompat.devbroker.quorum`),
a log directory formatted by ``kafka.tools.StorageTool``, and runs as
``java -cp 'jars/*' kafka.Kafka server.properties``.

Settings that only make tests fast (no initial rebalance delay, short minimum session
timeout, one partition for internal topics) live in the server properties
here, never in product defaults.
"""

from __future__ import annotations

import fcntl
import re
import shutil
import subprocess
import tempfile
from importlib import resources
from pathlib import Path

from rmqcompat.cache import CACHE_DIR_ENV, cache_root
from rmqcompat.devbroker.environment import environment_without
from rmqcompat.devbroker.quorum import Quorum
from rmqcompat.errors import RmqCompatError
from rmqcompat.java import java_on_path

KAFKA_VERSION = "4.1.1"
#: Environment variable that moves the jar cache (default ``$XDG_CACHE_HOME/rmqcompat`` or
#: ``~/.cache/rmqcompat``).
MIN_JAVA_MAJOR = 17
_RESOLVE_TIMEOUT_S = 900.0
_JAVA_PROBE_TIMEOUT_S = 30.0
_FORMAT_TIMEOUT_S = 120.0
_COMPLETE_MARKER = "complete"
_POM = "kafka-runtime.pom.xml"
_LOG_CONFIG = "log4j2.properties"
_CONFIG_NAME = "server.properties"
_CONTROLLER_PORT_NAME = "controller.port"
_LOG_DIR_NAME = "kraft-logs"
_JVM_OPTIONS = (
    "-Xms256m",
    "-Xmx1g",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:+ExitOnOutOfMemoryError",
    "-Djava.awt.headless=true",
)
#: A cluster node's JIT stops at C1: its start-up then costs 2.7 s of CPU against 4.2-4.8
#: with C2 as well (a lone node's start, measured 2026-11-29). Three nodes share two cores
#: with the tests, and a node restarted after SIGKILL under a load average of 50 and more
#: (CI, 2026-11-28) did not open its port within 180 s: its start is starved CPU time.
#: A lone node, which the benchmarks use, keeps the full JIT.
_CLUSTER_JVM_OPTIONS = ("-XX:TieredStopAtLevel=1",)
#: Variables of ours the JVM must not inherit: they would add options or classes behind
#: our back (and ``JAVA_TOOL_OPTIONS`` makes the JVM print a line on every start).
HIDDEN_ENV = ("CLASSPATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS")
#: A cluster's KRaft timeouts (Kafka's defaults: fetch 2 s, request 2 s, election 1 s),
#: for nodes that share two cores with each other and with the tests. With the defaults a
#: node restarted after SIGKILL (2026-11-27, load average 30-70) missed its 2 s fetch
#: deadline again and again while its JVM was starved: each miss started an election, the
#: quorum's epoch went from 1 to 5 in 25 s and the node took 52 s to serve (restarts of
#: over 180 s, logged at WARN only, were likely the same). A lone node elects only itself
#: and keeps the defaults.
_CLUSTER_QUORUM_TIMEOUTS = {
    "controller.quorum.fetch.timeout.ms": "10000",
    "controller.quorum.request.timeout.ms": "10000",
    "controller.quorum.election.timeout.ms": "3000",
}
_JAVA_VERSION = re.compile(r'version "(\d+)(?:\.(\d+))?')
_INSTALL_JAVA = "install a JDK 17 or newer (e.g. `apt install openjdk-17-jre-headless`)"
_USE_TANSU = "or use the embedded broker (--kind tansu / RMQCOMPAT_TEST_BROKER=tansu)"


class KafkaRuntimeError(RmqCompatError):
    """Java, Maven or the Kafka jars are missing or unusable (the message says how to fix it)."""


def java_executable() -> str:
    """Return the ``java`` to run: ``$JAVA_HOME/bin/java`` when set, else the one on PATH.

    Raises:
        KafkaRuntimeError: if there is none, or it is older than Java 17.
    """
    java = java_on_path()
    if java is None:
        raise KafkaRuntimeError(
            f"the kafka dev broker needs Java: no `java` on PATH; {_INSTALL_JAVA}, {_USE_TANSU}"
        )
    major = _java_major(java)
    if major < MIN_JAVA_MAJOR:
        raise KafkaRuntimeError(
            f"the kafka dev broker needs Java {MIN_JAVA_MAJOR}+, {java} is Java {major}; "
            f"{_INSTALL_JAVA}, {_USE_TANSU}"
        )
    return java


def java_available() -> bool:
    """Whether a usable Java runs here (the test fixture's default broker depends on it)."""
    try:
        java_executable()
    except KafkaRuntimeError:
        return False
    return True


def kafka_jars() -> Path:
    """Return the folder of Kafka's jars, resolving them from Maven Central the first time.

    Safe to call from several processes at once: one resolves, the others wait for it.

    Raises:
        KafkaRuntimeError: if the jars are not cached and Maven is missing, fails or cannot
            reach Maven Central; the message names the cause and the remedy.
    """
    version_dir = cache_root() / f"kafka-{KAFKA_VERSION}"
    jars = version_dir / "jars"
    if (version_dir / _COMPLETE_MARKER).exists():
        return jars
    try:
        version_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise KafkaRuntimeError(
            f"cannot create the Kafka jar cache {version_dir}: {exc}; set {CACHE_DIR_ENV}"
        ) from exc
    with (version_dir.parent / f"kafka-{KAFKA_VERSION}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (version_dir / _COMPLETE_MARKER).exists():
            _resolve_into(jars)
            (version_dir / _COMPLETE_MARKER).write_text(KAFKA_VERSION + "\n")
    return jars


def _resolve_into(jars: Path) -> None:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise KafkaRuntimeError(
            f"the kafka dev broker needs Maven once, to fetch Apache Kafka {KAFKA_VERSION} "
            f"from Maven Central: no `mvn` on PATH; install it (e.g. `apt install maven`), "
            f"{_USE_TANSU}"
        )
    with tempfile.TemporaryDirectory(prefix="resolve-", dir=jars.parent) as work:
        pom = Path(work) / "pom.xml"
        template = resources.files(__package__).joinpath(_POM).read_text(encoding="utf-8")
        pom.write_text(template.replace("@KAFKA_VERSION@", KAFKA_VERSION), encoding="utf-8")
        argv = [mvn, "-B", "-q", "-f", str(pom), "dependency:copy-dependencies"]
        try:
            result = run_tool(argv, _RESOLVE_TIMEOUT_S)
        except subprocess.TimeoutExpired as exc:
            raise KafkaRuntimeError(
                f"fetching Apache Kafka {KAFKA_VERSION} from Maven Central took over "
                f"{_RESOLVE_TIMEOUT_S:.0f} s; check the network, {_USE_TANSU}"
            ) from exc
        if result.returncode != 0:
            raise KafkaRuntimeError(
                f"could not fetch Apache Kafka {KAFKA_VERSION} from Maven Central (mvn exited "
                f"with {result.returncode}; is repo.maven.apache.org reachable?), {_USE_TANSU}"
                f": {_last_lines(result.stdout + result.stderr)}"
            )
        resolved = Path(work) / "target" / "jars"
        if not any(resolved.glob(f"kafka_2.13-{KAFKA_VERSION}.jar")):
            raise KafkaRuntimeError(f"Maven ran but fetched no kafka_2.13-{KAFKA_VERSION}.jar")
        shutil.rmtree(jars, ignore_errors=True)
        resolved.rename(jars)


def prepare_data_dir(
    java: str, jars: Path, host: str, port: int, quorum: Quorum, data_dir: Path
) -> Path:
    """Write ``server.properties`` into ``data_dir`` and format its log dir if it is new.

    A data directory formatted before keeps its cluster id, topics, records and offsets;
    a lone node's ports may change between runs (a cluster node's may not: the other
    voters know them).

    Returns:
        The path of the properties file.

    Raises:
        KafkaRuntimeError: if the storage tool fails.
    """
    config = data_dir / _CONFIG_NAME
    log_dir = data_dir / _LOG_DIR_NAME
    config.write_text(server_properties(host, port, quorum, log_dir), encoding="utf-8")
    if not (log_dir / "meta.properties").exists():
        _format(java, jars, config, quorum.cluster_id)
    return config


def stored_controller_port(data_dir: Path) -> int | None:
    """The controller port a data directory was last started with, if any."""
    try:
        return int((data_dir / _CONTROLLER_PORT_NAME).read_text(encoding="ascii"))
    except (OSError, ValueError):
        return None


def store_controller_port(data_dir: Path, port: int) -> None:
    """Remember the controller port, so a restart comes back on the same one when free."""
    (data_dir / _CONTROLLER_PORT_NAME).write_text(str(port), encoding="ascii")


def server_properties(host: str, port: int, quorum: Quorum, log_dir: Path) -> str:
    """The broker's configuration: a combined KRaft node on loopback, tuned for tests.

    Kafka's own topics get min(3, nodes) replicas (2 in sync once there are 3); topics
    created without a replication factor still get one replica (Kafka's default), so a
    client that forgets to ask for replication is caught on a cluster. A cluster's nodes
    wait longer for each other than Kafka's defaults (see ``_CLUSTER_QUORUM_TIMEOUTS``).
    """
    replicas, in_sync = str(quorum.internal_replication()), str(quorum.internal_min_in_sync())
    settings = {
        "process.roles": "broker,controller",
        "node.id": str(quorum.node_id),
        "controller.quorum.voters": quorum.voters(host),
        "listeners": f"PLAINTEXT://{host}:{port},CONTROLLER://{host}:{quorum.controller_port}",
        "advertised.listeners": f"PLAINTEXT://{host}:{port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "log.dirs": str(log_dir),
        # One partition for each internal topic starts fast.
        "offsets.topic.replication.factor": replicas,
        "offsets.topic.num.partitions": "1",
        "transaction.state.log.replication.factor": replicas,
        "transaction.state.log.min.isr": in_sync,
        "transaction.state.log.num.partitions": "1",
        "share.coordinator.state.topic.replication.factor": replicas,
        "share.coordinator.state.topic.min.isr": in_sync,
        "share.coordinator.state.topic.num.partitions": "1",
        # As production clusters are usually set up (and docker/compose.yaml): a client
        # that leans on auto-creation fails here instead of in production.
        "auto.create.topics.enable": "false",
        # Test speed: a lone member joins at once, and the fixture's 2 s sessions are legal.
        "group.initial.rebalance.delay.ms": "0",
        "group.min.session.timeout.ms": "500",
    }
    if quorum.size > 1:
        settings.update(_CLUSTER_QUORUM_TIMEOUTS)
    lines = [f"{key}={value}" for key, value in settings.items()]
    return "# Written by rmqcompat's dev broker; rewritten on every start.\n" + "\n".join(lines)


def command(java: str, jars: Path, config: Path, quorum: Quorum) -> list[str]:
    """The broker's argv: ``java [options] -cp 'jars/*' kafka.Kafka server.properties``
    (a cluster node's options: ``_CLUSTER_JVM_OPTIONS`` too)."""
    options = _jvm_options()
    if quorum.size > 1:
        options += _CLUSTER_JVM_OPTIONS
    return [java, *options, "-cp", _classpath(jars), "kafka.Kafka", str(config)]


def _format(java: str, jars: Path, config: Path, cluster_id: str) -> None:
    argv = [java, *_jvm_options(), "-cp", _classpath(jars), "kafka.tools.StorageTool"]
    # one "--cluster-id=" argument: an id may start with "-" (1 in 64), read as an option
    argv += ["format", f"--cluster-id={cluster_id}", "-c", str(config)]
    result = run_tool(argv, _FORMAT_TIMEOUT_S)
    if result.returncode != 0:
        raise KafkaRuntimeError(
            f"formatting the Kafka log dir failed (exit {result.returncode}): "
            f"{_last_lines(result.stdout + result.stderr)}"
        )


def child_env() -> dict[str, str]:
    """Our environment without the variables the JVM must not inherit."""
    return environment_without(HIDDEN_ENV)


def _jvm_options() -> list[str]:
    log_config = resources.files(__package__).joinpath(_LOG_CONFIG)
    return [*_JVM_OPTIONS, f"-Dlog4j2.configurationFile={log_config}"]


def _classpath(jars: Path) -> str:
    return str(jars / "*")


def _java_major(java: str) -> int:
    try:
        probe = run_tool([java, "-version"], _JAVA_PROBE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise KafkaRuntimeError(f"cannot run {java} -version: {exc}; {_INSTALL_JAVA}") from exc
    match = _JAVA_VERSION.search(probe.stderr + probe.stdout)
    if match is None:
        raise KafkaRuntimeError(f"cannot tell the version of {java}: {probe.stderr.strip()!r}")
    major = int(match.group(1))
    # Java 8 and older call themselves "1.8".
    return int(match.group(2) or 0) if major == 1 else major


def run_tool(argv: list[str], timeout_s: float) -> subprocess.CompletedProcess[str]:
    """Run a tool to its end with our environment minus :data:`HIDDEN_ENV`; its output is
    captured as text (the caller reads the exit code)."""
    return subprocess.run(  # noqa: S603 - fixed argv, no shell
        argv,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
        env=child_env(),
    )


def _last_lines(text: str, count: int = 8) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return " | ".join(lines[-count:]) or "no output"
