"""``rmqcompat demo``: the retry demo, on the configured cluster or a dev broker."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import cast

import click

from rmqcompat.cli.context import CliContext
from rmqcompat.cli.demo import run_demo, summary
from rmqcompat.devbroker.kinds import DEV_BROKER_KINDS, DevBrokerKind


@contextlib.contextmanager
def _broker(configured: str | None, kind: DevBrokerKind) -> Iterator[str]:
    if configured:
        yield configured
        return
    # dev extra: only needed without a cluster
    from rmqcompat.devbroker import DevBroker, DevBrokerError

    broker = DevBroker(kind=kind)
    try:
        broker.start()
    except DevBrokerError as exc:
        raise click.ClickException(str(exc)) from exc
    try:
        click.echo(f"no cluster configured: {kind} dev broker at {broker.bootstrap_servers}")
        yield broker.bootstrap_servers
    finally:
        broker.stop()


@click.command("demo")
@click.option(
    "--broker",
    "kind",
    type=click.Choice(DEV_BROKER_KINDS),
    default="tansu",
    show_default=True,
    help="The dev broker to start when no cluster is configured (kafka: Apache Kafka).",
)
@click.pass_obj
def demo(obj: CliContext, kind: str) -> None:
    """Show retries on the delay ladder and a dead letter; exit 0 only if all went as expected.

    \b
    Example:
      rmqcompat demo --broker kafka
    """
    with _broker(obj.bootstrap_servers, cast(DevBrokerKind, kind)) as bootstrap:
        outcome = run_demo(bootstrap, say=lambda line: click.echo(line))
    click.echo("summary:")
    for line in summary(outcome):
        click.echo(line)
    sys.exit(0 if outcome.ok() else 1)
