"""``rmqcompat dev-broker`` serves Kafka in the foreground and stops cleanly on a signal,
for each ``--kind``; the ``kafka`` kind is Apache Kafka itself, with its rules."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from rmqcompat.devbroker import DEV_BROKER_KINDS, HOST, free_port, java_available
from rmqcompat.devbroker.ports import port_is_free

CLI = [sys.executable, "-m", "rmqcompat.cli.main", "dev-broker"]
NO_JAVA = "no Java 17+ here: the kafka kind cannot run (rmqcompat dev-broker says so too)"


@pytest.fixture(params=DEV_BROKER_KINDS)
def cli_broker(request: pytest.FixtureRequest) -> Iterator[tuple[subprocess.Popen[str], int]]:
    yield from _cli_broker(request.param)


@pytest.fixture
def cli_kafka() -> Iterator[tuple[subprocess.Popen[str], int]]:
    yield from _cli_broker("kafka")


def _cli_broker(kind: str) -> Iterator[tuple[subprocess.Popen[str], int]]:
    if kind == "kafka" and not java_available():
        pytest.skip(NO_JAVA)
    port = free_port()
    process = subprocess.Popen(
        [*CLI, "--port", str(port), "--kind", kind],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        yield process, port
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT], ids=["term", "ctrl-c"])
def test_prints_bootstrap_serves_metadata_and_stops_cleanly(
    cli_broker: tuple[subprocess.Popen[str], int], stop_signal: signal.Signals
) -> None:
    process, port = cli_broker
    assert process.stdout is not None

    line = process.stdout.readline()

    assert line == f"bootstrap.servers={HOST}:{port}\n"
    metadata = AdminClient({"bootstrap.servers": f"{HOST}:{port}"}).list_topics(timeout=10)
    assert metadata.brokers
    process.send_signal(stop_signal)
    assert process.wait(timeout=40) == 0
    assert process.stdout.read() == ""
    assert not _accepts_connections(port)


def _accepts_connections(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=1):
            return True
    except OSError:
        return False


def test_kafka_kind_is_apache_kafka_round_trips_a_record_and_refuses_illegal_names(
    cli_kafka: tuple[subprocess.Popen[str], int],
) -> None:
    process, port = cli_kafka
    assert process.stdout is not None
    assert process.stdout.readline() == f"bootstrap.servers={HOST}:{port}\n"
    bootstrap = f"{HOST}:{port}"
    admin = AdminClient({"bootstrap.servers": bootstrap})

    legal, illegal = "cli-kafka-roundtrip", "%RETRY%g"
    futures = admin.create_topics([NewTopic(legal, 1), NewTopic(illegal, 1)])
    futures[legal].result(timeout=30)
    with pytest.raises(Exception, match="Topic name is invalid") as refused:
        futures[illegal].result(timeout=30)
    assert refused.value.args[0].code() == KafkaError.TOPIC_EXCEPTION

    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce(legal, key=b"k", value=b"v", headers=[("h", b"1")])
    assert producer.flush(30) == 0
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "cli", "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([legal])
    try:
        record = None
        for _ in range(30):
            record = consumer.poll(1.0)
            if record is not None:
                break
    finally:
        consumer.close()
    assert record is not None and record.error() is None
    assert (record.key(), record.value(), record.headers()) == (b"k", b"v", [("h", b"1")])

    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=40) == 0
    assert not _accepts_connections(port)


def test_data_dir_is_refused_for_a_broker_that_keeps_no_data(tmp_path: Path) -> None:
    result = subprocess.run(
        [*CLI, "--kind", "tansu", "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode == 2
    assert "the tansu broker keeps no data" in result.stderr


@pytest.mark.slow
@pytest.mark.usefixtures("kafka_clusters_run")
def test_nodes_3_runs_a_three_broker_kafka_cluster_until_sigterm() -> None:
    first, process, line = _started_cluster()
    try:
        brokers = [f"{HOST}:{port}" for port in range(first, first + 3)]
        assert line == f"bootstrap.servers={','.join(brokers)}\n"
        # every node answers on its own, and knows the other two
        for address in brokers:
            metadata = AdminClient({"bootstrap.servers": address}).list_topics(timeout=10)
            assert sorted(metadata.brokers) == [1, 2, 3]
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
        assert not any(_accepts_connections(port) for port in range(first, first + 6))
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _started_cluster(attempts: int = 3) -> tuple[int, subprocess.Popen[str], str]:
    """``dev-broker --nodes 3`` on a free run of ports: (its first port, the process, the
    first line it printed). The ports are free when chosen, but they lie in the kernel's
    range of ephemeral ports, so a client's socket can take one before a node binds it (a
    CI run, 2026-11-26: BindException, the command exited 1 with that in its message):
    a start that ends before printing is tried again on a new run of ports."""
    for _ in range(attempts):
        first = _free_run(6)
        process = subprocess.Popen(
            [*CLI, "--kind", "kafka", "--nodes", "3", "--port", str(first)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert process.stdout is not None
        line = process.stdout.readline()
        if line:
            return first, process, line
        process.wait()  # ended during start-up; its error is on stderr
    raise AssertionError(f"dev-broker --nodes 3 ended during start-up {attempts} times")


def _free_run(count: int) -> int:
    """The first of ``count`` consecutive free loopback ports in 39800-39830, the range
    kept for manual clusters on the shared machines."""
    for first in range(39800, 39831 - count):
        if all(port_is_free(port) for port in range(first, first + count)):
            return first
    pytest.skip("no run of free ports in 39800-39830")


@pytest.mark.parametrize("kind", ["tansu", "noida"])
def test_nodes_above_1_need_the_kafka_kind(kind: str) -> None:
    result = subprocess.run(
        [*CLI, "--kind", kind, "--nodes", "3"], capture_output=True, text=True, timeout=60
    )

    assert result.returncode == 2
    assert "a cluster of 3 nodes runs Apache Kafka: add --kind kafka" in result.stderr
