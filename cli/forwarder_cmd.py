"""``rmqcompat forwarder run``: the delay-forwarder as a foreground service."""

from __future__ import annotations

import logging
import signal
from types import FrameType

import click

from rmqcompat.cli.collector import collector_tuned_for_service
from rmqcompat.cli.context import CliContext
from rmqcompat.cli.settings import parse_passthrough
from rmqcompat.forwarder import DelayForwarder
from rmqcompat.forwarder.holding import DEFAULT_MAX_HELD, DEFAULT_MAX_HELD_BYTES
from rmqcompat.message import DEFAULT_MAX_MESSAGE_SIZE
from rmqcompat.topics.delay_levels import DEFAULT_MESSAGE_DELAY_LEVEL


@click.group(name="forwarder")
def forwarder() -> None:
    """The delay-forwarder: delivers parked (retry, delayed, timer) messages when due.

    \b
    Example:
      rmqcompat --bootstrap-servers kafka:9092 forwarder run
    """


@forwarder.command(name="run")
@click.option(
    "--message-delay-level",
    default=DEFAULT_MESSAGE_DELAY_LEVEL,
    show_default=True,
    help="Delay table; must match the namespace's producers and consumers.",
)
@click.option(
    "--metrics-port",
    type=click.IntRange(0, 65535),
    default=None,
    help="Serve /metrics (Prometheus text) and /health on this port.",
)
@click.option("--metrics-host", default="127.0.0.1", show_default=True)
@click.option(
    "--max-message-size",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_MESSAGE_SIZE,
    show_default=True,
    help="Largest body in bytes; must match the namespace's clients.",
)
@click.option(
    "--max-held-per-partition",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_HELD,
    show_default=True,
    help="Records held in memory per partition before it is paused (size it to rate x delay).",
)
@click.option(
    "--max-held-bytes-per-partition",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_HELD_BYTES,
    show_default=True,
    help="Bytes (values + keys + headers) held per partition before it is paused.",
)
@click.option(
    "--trace/--no-trace",
    default=True,
    show_default=True,
    help="Write FORWARD and QUARANTINE events to the namespace's trace topic.",
)
@click.option(
    "-X",
    "passthrough",
    multiple=True,
    help="librdkafka setting key=value (repeatable; wins over the global -X and --config).",
)
@click.pass_obj
def run(
    obj: CliContext,
    message_delay_level: str,
    metrics_port: int | None,
    metrics_host: str,
    max_message_size: int,
    max_held_per_partition: int,
    max_held_bytes_per_partition: int,
    trace: bool,
    passthrough: tuple[str, ...],
) -> None:
    """Forward due records until SIGTERM or Ctrl-C, then commit what was delivered and exit.

    A failure to start is one line on stderr, and nothing is created: exit 2 for bad
    settings or -X, 1 for an unreachable broker or a metrics port in use.

    \b
    Example:
      rmqcompat --bootstrap-servers kafka:9092 forwarder run --metrics-port 9400
    """
    if not obj.bootstrap_servers:
        raise click.UsageError("--bootstrap-servers (or RMQCOMPAT_BOOTSTRAP_SERVERS) is required")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    service = DelayForwarder(
        obj.bootstrap_servers,
        namespace=obj.namespace,
        message_delay_level=message_delay_level,
        kafka_config={**obj.kafka_config, **parse_passthrough(passthrough)},
        metrics_port=metrics_port,
        metrics_host=metrics_host,
        max_message_size=max_message_size,
        max_held_per_partition=max_held_per_partition,
        max_held_bytes_per_partition=max_held_bytes_per_partition,
        trace_enabled=trace,
    )

    def stop(_signum: int, _frame: FrameType | None) -> None:
        service.request_stop()

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, stop)
    with collector_tuned_for_service():  # this process's choice (cli/collector.py)
        service.run_forever()
