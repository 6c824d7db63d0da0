"""``rmqcompat demo``: the retry demo, on the configured cluster or a dev broker."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

import click

from rmqcompat.cli.context import CliContext
from rmqcompat.cli.demo import run_demo, summary


@contextlib.contextmanager
def _broker(configured: str | None) -> Iterator[str]:
    if configured:
        yield configured
        return
    from rmqcompat.dev_broker import DevBroker  # dev extra: only needed without a cluster

    with DevBroker() as broker:
        click.echo(f"no cluster configured: dev broker at {broker.bootstrap_servers}")
        yield broker.bootstrap_servers


@click.command("demo")
@click.pass_obj
def demo(obj: CliContext) -> None:
    """Show retries on the delay ladder and a dead letter; exit 0 only if all went as expected."""
    with _broker(obj.bootstrap_servers) as bootstrap:
        outcome = run_demo(bootstrap, say=lambda line: click.echo(line))
    click.echo("summary:")
    for line in summary(outcome):
        click.echo(line)
    sys.exit(0 if outcome.ok() else 1)
