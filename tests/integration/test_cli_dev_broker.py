"""``rmqcompat dev-broker`` serves Kafka in the foreground and stops cleanly on a signal,
for each ``--kind``."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient

from rmqcompat.dev_broker import DEV_BROKER_KINDS, HOST, free_port

CLI = [sys.executable, "-m", "rmqcompat.cli.main", "dev-broker"]


@pytest.fixture(params=DEV_BROKER_KINDS)
def cli_broker(request: pytest.FixtureRequest) -> Iterator[tuple[subprocess.Popen[str], int]]:
    port = free_port()
    process = subprocess.Popen(
        [*CLI, "--port", str(port), "--kind", request.param],
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
    assert process.wait(timeout=15) == 0
    assert process.stdout.read() == ""
    assert not _accepts_connections(port)


def _accepts_connections(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=1):
            return True
    except OSError:
        return False


def test_data_dir_is_refused_for_a_broker_that_keeps_no_data(tmp_path: Path) -> None:
    result = subprocess.run(
        [*CLI, "--kind", "tansu", "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode == 2
    assert "only the noida broker keeps data" in result.stderr
