"""Entry point of the ``rmqcompat`` command; each command lives in its own module."""

from __future__ import annotations

import click

from rmqcompat.cli.context import CliContext
from rmqcompat.cli.demo_cmd import demo
from rmqcompat.cli.dev_broker_cmd import dev_broker
from rmqcompat.cli.forwarder_cmd import forwarder
from rmqcompat.cli.spool_cmd import spool
from rmqcompat.cli.topics_cmd import topics


@click.group(name="rmqcompat")
@click.option(
    "--bootstrap-servers",
    envvar="RMQCOMPAT_BOOTSTRAP_SERVERS",
    default=None,
    help="Kafka bootstrap servers, e.g. host1:9092,host2:9092.",
)
@click.option("--namespace", default="", help="Prefix of internal topic and group names.")
@click.pass_context
def main(ctx: click.Context, bootstrap_servers: str | None, namespace: str) -> None:
    """RocketMQ consumer-retry semantics on Apache Kafka."""
    ctx.obj = CliContext(bootstrap_servers=bootstrap_servers, namespace=namespace)


main.add_command(demo)
main.add_command(dev_broker)
main.add_command(forwarder)
main.add_command(spool)
main.add_command(topics)

if __name__ == "__main__":
    main()
