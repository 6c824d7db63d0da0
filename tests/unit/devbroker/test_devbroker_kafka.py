"""The kafka dev broker kind without a broker: its server properties, and one clear error,
with nothing left behind, when Java, Maven or the network for the first fetch is missing."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from rmqcompat.cache import CACHE_DIR_ENV, cache_root
from rmqcompat.devbroker import DevBroker, DevBrokerUnavailableError, apache_kafka, quorum
from rmqcompat.devbroker.apache_kafka import KafkaRuntimeError


def _properties(text: str) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in text.splitlines() if not line.startswith("#"))
    return dict(pairs)


def test_server_properties_are_one_loopback_kraft_node_tuned_for_tests(tmp_path: Path) -> None:
    lone = quorum.alone(9093)
    props = _properties(apache_kafka.server_properties("127.0.0.1", 9092, lone, tmp_path))

    assert props["process.roles"] == "broker,controller"
    assert props["listeners"] == "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093"
    assert props["advertised.listeners"] == "PLAINTEXT://127.0.0.1:9092"
    assert props["controller.quorum.voters"] == "1@127.0.0.1:9093"
    assert props["log.dirs"] == str(tmp_path)
    assert props["group.initial.rebalance.delay.ms"] == "0"
    # the fixtures' 2 s sessions must be legal
    assert int(props["group.min.session.timeout.ms"]) <= 2000
    assert props["offsets.topic.replication.factor"] == "1"
    assert props["transaction.state.log.min.isr"] == "1"
    assert props["auto.create.topics.enable"] == "false"
    # a lone node elects only itself: Kafka's quorum timeouts stay
    assert not any(key.startswith("controller.quorum.") and "timeout" in key for key in props)


def test_a_cluster_node_votes_with_every_node_and_replicates_kafkas_own_topics(
    tmp_path: Path,
) -> None:
    node = quorum.Quorum(2, {1: 9101, 2: 9102, 3: 9103}, quorum.new_cluster_id())
    props = _properties(apache_kafka.server_properties("127.0.0.1", 9002, node, tmp_path))

    assert props["node.id"] == "2"
    assert props["listeners"] == "PLAINTEXT://127.0.0.1:9002,CONTROLLER://127.0.0.1:9102"
    assert props["controller.quorum.voters"] == (
        "1@127.0.0.1:9101,2@127.0.0.1:9102,3@127.0.0.1:9103"
    )
    for topic in ("offsets.topic", "transaction.state.log", "share.coordinator.state.topic"):
        assert props[f"{topic}.replication.factor"] == "3"
    assert props["transaction.state.log.min.isr"] == "2"
    # topics created without a replication factor keep Kafka's default of one replica
    assert "default.replication.factor" not in props
    # a starved node misses a 2 s fetch deadline: the cluster waits longer than Kafka's
    # defaults before it calls an election
    assert int(props["controller.quorum.fetch.timeout.ms"]) >= 10_000
    assert int(props["controller.quorum.request.timeout.ms"]) >= 10_000


def test_a_cluster_nodes_jit_stops_at_c1_and_a_lone_nodes_does_not(tmp_path: Path) -> None:
    """Three cluster nodes start beside the tests on two cores: their start-up's CPU time
    is what a restart waits for. A lone node serves the benchmarks: it keeps C2."""
    config = tmp_path / "server.properties"
    node = quorum.Quorum(2, {1: 9101, 2: 9102, 3: 9103}, quorum.new_cluster_id())

    clustered = apache_kafka.command("java", tmp_path, config, node)
    lone = apache_kafka.command("java", tmp_path, config, quorum.alone(9093))

    assert "-XX:TieredStopAtLevel=1" in clustered
    assert clustered.index("-XX:TieredStopAtLevel=1") < clustered.index("kafka.Kafka")
    assert not any(option.startswith("-XX:TieredStopAtLevel") for option in lone)
    assert lone[-2:] == clustered[-2:] == ["kafka.Kafka", str(config)]


def test_two_nodes_replicate_kafkas_own_topics_twice_with_one_in_sync() -> None:
    pair = quorum.Quorum(1, {1: 9101, 2: 9102}, "id")
    assert (pair.internal_replication(), pair.internal_min_in_sync()) == (2, 1)


def test_a_quorum_written_into_a_data_dir_is_read_back(tmp_path: Path) -> None:
    node = quorum.Quorum(3, {1: 9101, 2: 9102, 3: 9103}, quorum.new_cluster_id())
    assert quorum.load(tmp_path) is None  # a lone node's directory

    node.save(tmp_path)

    assert quorum.load(tmp_path) == node


def test_a_node_outside_its_voters_is_refused() -> None:
    with pytest.raises(ValueError, match="node 4 is not one of the voters"):
        quorum.Quorum(4, {1: 9101, 2: 9102, 3: 9103}, "id")


@pytest.fixture
def empty_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No java, no mvn: an empty PATH, no JAVA_HOME, an empty jar cache."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    return bin_dir


def _script(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def test_missing_java_is_named_with_how_to_get_it(empty_path: Path) -> None:
    with pytest.raises(KafkaRuntimeError, match=r"needs Java: no `java` on PATH.*JDK 17"):
        apache_kafka.java_executable()
    assert not apache_kafka.java_available()


def test_an_old_java_is_refused(empty_path: Path) -> None:
    _script(empty_path, "java", "echo 'openjdk version \"11.0.2\" 2019-01-15' >&2")

    with pytest.raises(KafkaRuntimeError, match="needs Java 17"):
        apache_kafka.java_executable()


def test_missing_maven_on_the_first_fetch_is_named(empty_path: Path) -> None:
    with pytest.raises(KafkaRuntimeError, match=r"needs Maven once.*no `mvn` on PATH"):
        apache_kafka.kafka_jars()


def test_a_failed_fetch_names_maven_central_and_keeps_no_partial_cache(empty_path: Path) -> None:
    # What mvn prints without network access, then its exit code.
    offline = 'echo "[ERROR] Could not transfer artifact: Network unreachable"\nexit 1'
    _script(empty_path, "mvn", offline)

    with pytest.raises(KafkaRuntimeError, match=r"Maven Central.*Network unreachable"):
        apache_kafka.kafka_jars()

    version_dir = cache_root() / f"kafka-{apache_kafka.KAFKA_VERSION}"
    assert not (version_dir / "jars").exists()
    assert not (version_dir / "complete").exists()


def test_a_cached_fetch_needs_neither_maven_nor_the_network(empty_path: Path) -> None:
    version_dir = cache_root() / f"kafka-{apache_kafka.KAFKA_VERSION}"
    (version_dir / "jars").mkdir(parents=True)
    (version_dir / "complete").write_text(apache_kafka.KAFKA_VERSION)

    assert apache_kafka.kafka_jars() == version_dir / "jars"


def test_starting_without_java_fails_clearly_and_leaves_nothing_behind(
    empty_path: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    broker = DevBroker(kind="kafka")

    with pytest.raises(DevBrokerUnavailableError, match="needs Java"):
        broker.start()

    assert list(scratch.iterdir()) == []
    assert broker.pid is None


def test_cli_without_java_prints_one_line_and_no_traceback(empty_path: Path) -> None:
    env = {**os.environ, "PATH": str(empty_path)}
    result = subprocess.run(
        [sys.executable, "-m", "rmqcompat.cli.main", "dev-broker", "--kind", "kafka"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )

    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("Error: the kafka dev broker needs Java")
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_a_cluster_id_starting_with_a_dash_is_not_read_as_an_option(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """url-safe base64 of a random uuid starts with "-" once in 64 formats."""
    import subprocess
    import uuid

    seen: list[list[str]] = []

    def run(argv: list[str], _timeout: float) -> subprocess.CompletedProcess[str]:
        seen.append(argv)
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(apache_kafka, "run_tool", run)
    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(bytes=b"\xf8" + b"\x00" * 15))
    cluster_id = quorum.new_cluster_id()
    apache_kafka._format("java", tmp_path, tmp_path / "server.properties", cluster_id)
    (argv,) = seen
    ids = [a for a in argv if a.startswith("--cluster-id=")]
    assert ids == ["--cluster-id=-AAAAAAAAAAAAAAAAAAAAA"]
    assert "-t" not in argv
