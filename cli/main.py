"""Entry point of the ``rmqcompat`` command; each command lives in its own module.

Every failure ends the command with one line on stderr and one of three exit codes
(:func:`exit_code`); ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from confluent_kafka import KafkaException

from rmqcompat.cli import context
from rmqcompat.cli.audit_cmd import audit
from rmqcompat.cli.consume_cmd import consume
from rmqcompat.cli.context import CliContext
from rmqcompat.cli.demo_cmd import demo
from rmqcompat.cli.dev_broker_cmd import dev_broker
from rmqcompat.cli.dlq_cmd import dlq
from rmqcompat.cli.forwarder_cmd import forwarder
from rmqcompat.cli.msg_cmd import msg
from rmqcompat.cli.produce_cmd import produce
from rmqcompat.cli.settings import BOOTSTRAP_KEY, load_config_file, parse_passthrough
from rmqcompat.cli.spool_cmd import spool
from rmqcompat.cli.topics_cmd import topics
from rmqcompat.core import implementation
from rmqcompat.errors import (
    ConfigError,
    InvalidMessageError,
    InvalidNameError,
    MessageTooLargeError,
    RmqCompatError,
)

EXIT_OK = 0
#: The command ran and failed: broker unreachable, unknown group, failed sends, a
#: verify mismatch, messages still spooled, a port in use.
EXIT_FAILED = 1
#: Bad input, found before any change: options, names, times, -X settings, config file.
EXIT_USAGE = 2

_HANDLED = (RmqCompatError, KafkaException, OSError)
_BAD_INPUT = (ConfigError, InvalidNameError, InvalidMessageError, MessageTooLargeError)


def exit_code(exc: BaseException) -> int:
    """The exit code of a command that failed with ``exc``."""
    return EXIT_USAGE if isinstance(exc, _BAD_INPUT) else EXIT_FAILED


class _Main(click.Group):
    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        given = ["rmqcompat", *args]  # copied before parsing consumes them
        ctx = super().make_context(info_name, args, parent=parent, **extra)
        ctx.meta[context.ARGV_KEY] = given
        return ctx

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
@click.option(
    "--namespace",
    envvar="RMQCOMPAT_NAMESPACE",
    default="",
    help="Prefix of internal topic and group names.",
)
@click.option(
    "-X",
    "passthrough",
    multiple=True,
    metavar="KEY=VALUE",
    help="librdkafka setting for every client (repeatable; wins over --config).",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="File of librdkafka settings: TOML (.toml) or Java properties.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=10.0,
    show_default=True,
    help="Seconds to wait for a broker to answer before failing.",
)
@click.option("--debug", is_flag=True, help="Show the traceback of a failure.")
@click.version_option(
    package_name="rmqcompat",
    message=f"%(prog)s %(version)s, per-message paths: {implementation()}",
)
@click.pass_context
def main(
    ctx: click.Context,
    bootstrap_servers: str | None,
    namespace: str,
    passthrough: tuple[str, ...],
    config_file: Path | None,
    timeout: float,
    debug: bool,
) -> None:
    """RocketMQ consumer-retry semantics on Apache Kafka.

    Exit codes: 0 success; 1 the command failed (broker unreachable, unknown group,
    failed sends, a verify mismatch); 2 bad input (options, names, times, -X settings,
    the config file), reported before anything is changed.

    \b
    Example:
      rmqcompat --bootstrap-servers 127.0.0.1:9092 --namespace prod dlq list
    """
    try:
        settings = load_config_file(config_file) if config_file else {}
        settings.update(parse_passthrough(passthrough))
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc
    file_bootstrap = settings.pop(BOOTSTRAP_KEY, None)
    ctx.obj = CliContext(
        bootstrap_servers=bootstrap_servers or file_bootstrap,
        namespace=namespace,
        kafka_config=settings,
        timeout_s=timeout,
    )


for _command in (consume, demo, dev_broker, dlq, forwarder, msg, produce, spool, topics):
    main.add_command(_command)
main.add_command(audit)

if __name__ == "__main__":
    main()
