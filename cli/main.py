"""Entry point of the ``rmqcompat`` command; each command lives in its own module.

Every failure ends the command with one line on stderr and an exit code that says what
kind of failure it was (:func:`exit_code`); ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

from typing import Any

import click
from confluent_kafka import KafkaException

from rmqcompat.cli.context import CliContext
from rmqcompat.cli.demo_cmd import demo
from rmqcompat.cli.dev_broker_cmd import dev_broker
from rmqcompat.cli.forwarder_cmd import forwarder
from rmqcompat.cli.spool_cmd import spool
from rmqcompat.cli.topics_cmd import topics
from rmqcompat.errors import (
    BrokerUnreachableError,
    ConfigError,
    InvalidMessageError,
    InvalidNameError,
    RmqCompatError,
)

#: Exit codes; 0 is success and 2 a usage error (click's own).
EXIT_FAILED = 1  # the command ran and reports a failure (e.g. messages still spooled)
EXIT_BAD_SETTINGS = 3  # an option, name or -X librdkafka setting is invalid
EXIT_BROKER_UNREACHABLE = 4  # no broker answered within the start-up bound
EXIT_LOCAL_RESOURCE = 5  # a local resource is unavailable (metrics port in use, a file)

_HANDLED = (RmqCompatError, KafkaException, OSError)


def exit_code(exc: BaseException) -> int:
    """The exit code of a command that failed with ``exc``."""
    if isinstance(exc, ConfigError | InvalidNameError | InvalidMessageError):
        return EXIT_BAD_SETTINGS
    if isinstance(exc, BrokerUnreachableError):
        return EXIT_BROKER_UNREACHABLE
    if isinstance(exc, OSError):
        return EXIT_LOCAL_RESOURCE
    return EXIT_FAILED


class _Main(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except _HANDLED as exc:
            if ctx.params.get("debug"):
                raise
            click.echo(f"Error: {_one_line(exc)}", err=True)
            ctx.exit(exit_code(exc))


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


@click.group(name="rmqcompat", cls=_Main)
@click.option(
    "--bootstrap-servers",
    envvar="RMQCOMPAT_BOOTSTRAP_SERVERS",
    default=None,
    help="Kafka bootstrap servers, e.g. host1:9092,host2:9092.",
)
@click.option("--namespace", default="", help="Prefix of internal topic and group names.")
@click.option("--debug", is_flag=True, help="Show the traceback of a failure.")
@click.pass_context
def main(ctx: click.Context, bootstrap_servers: str | None, namespace: str, debug: bool) -> None:
    """RocketMQ consumer-retry semantics on Apache Kafka.

    Exit codes: 0 success, 1 the command reports a failure, 2 usage error, 3 invalid
    settings (options, names, -X librdkafka settings), 4 broker unreachable, 5 a local
    resource unavailable (metrics port in use, a file).
    """
    ctx.obj = CliContext(bootstrap_servers=bootstrap_servers, namespace=namespace)


main.add_command(demo)
main.add_command(dev_broker)
main.add_command(forwarder)
main.add_command(spool)
main.add_command(topics)

if __name__ == "__main__":
    main()
