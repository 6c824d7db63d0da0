"""The broker every benchmark runs on: ``--bootstrap-servers`` (or
``RMQCOMPAT_BOOTSTRAP_SERVERS``), else a dev broker of ``--broker`` kind, Apache Kafka by
default where Java runs. The raw client and the SDK always share the broker of one run."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from confluent_kafka import Producer

from rmqcompat.devbroker import DEV_BROKER_KINDS, DevBroker, free_port, java_available


def add_broker_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--bootstrap-servers`` and ``--broker`` to a benchmark's options."""
    parser.add_argument(
        "--bootstrap-servers",
        default=os.environ.get("RMQCOMPAT_BOOTSTRAP_SERVERS"),
        help="an existing cluster (default: RMQCOMPAT_BOOTSTRAP_SERVERS), else a dev broker",
    )
    parser.add_argument(
        "--broker",
        choices=DEV_BROKER_KINDS,
        default="kafka" if java_available() else "tansu",
        help="the dev broker to start when no cluster is given (default: kafka where Java runs)",
    )


@contextlib.contextmanager
def broker(args: argparse.Namespace) -> Iterator[str]:
    """Yield the bootstrap servers of the run's broker, starting a dev broker if needed."""
    if args.bootstrap_servers:
        print(f"broker: {args.bootstrap_servers} (given)", flush=True)
        yield args.bootstrap_servers
        return
    with DevBroker(kind=args.broker) as dev:
        print(f"broker: {args.broker} dev broker at {dev.bootstrap_servers}", flush=True)
        yield dev.bootstrap_servers


def produce_waiting(
    producer: Producer, topic: str, value: bytes, key: bytes | None = None, headers: Any = None
) -> None:
    """``producer.produce`` that serves delivery reports while librdkafka's local queue is
    full, so filling or copying any number of records never fails with BufferError."""
    while True:
        try:
            producer.produce(topic, value, key, headers=headers)
            return
        except BufferError:
            producer.poll(0.01)


@contextlib.contextmanager
def forwarder_process(
    bootstrap: str,
    namespace: str,
    table: str,
    *,
    trace: bool,
    overrides: Mapping[str, Any],
    options: Sequence[str] = (),
) -> Iterator[subprocess.Popen[bytes]]:
    """``rmqcompat forwarder run`` in its own process (as users deploy it), healthy on
    entry (the process is yielded: a benchmark may kill it); ``overrides`` are its ``-X``
    librdkafka settings, ``options`` further CLI options. Stopped with SIGTERM on exit."""
    port = free_port()
    passthrough = [arg for k, v in overrides.items() for arg in ("-X", f"{k}={v}")]
    cmd = [sys.executable, "-m", "rmqcompat.cli.main", "--bootstrap-servers", bootstrap,
           "--namespace", namespace, "forwarder", "run", "--message-delay-level", table,
           "--metrics-port", str(port), "--trace" if trace else "--no-trace",
           *options, *passthrough]  # fmt: skip
    proc = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not _healthy(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the forwarder did not become healthy")
            time.sleep(0.05)
        yield proc
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as reply:
            return bool(reply.status == 200)
    except OSError:
        return False
