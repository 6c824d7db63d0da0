"""``rmqcompat dev-broker`` serves Kafka in the foreground and stops cleanly on a signal."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest
from confluent_kafka.admin import AdminClient

from rmqcompat.dev_broker import HOST, free_port


@pytest.fixture
def cli_broker() -> Iterator[tuple[subprocess.Popen[str], int]]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "rmqcompat.cli.main", "dev-broker", "--port", str(port)],
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
