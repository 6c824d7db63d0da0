"""``rmqcompat spool``: inspect and re-send a producer's durable spool."""

from __future__ import annotations

import click

from rmqcompat.cli.context import CliContext
from rmqcompat.cli.output import emit_json, emit_table
from rmqcompat.producer import DefaultMQProducer, Spool, SpoolEntry

_DIR = click.option(
    "--dir",
    "directory",
    required=True,
    type=click.Path(file_okay=False),
    help="The producer's spool_dir.",
)


@click.group(name="spool")
def spool() -> None:
    """Messages a producer kept on disk after retriable send failures.

    Files that cannot be read are named on stderr, left in place, and make the command
    exit with status 1.

    \b
    Example:
      rmqcompat spool list --dir /var/spool/orders
    """


def _readable(directory: str) -> tuple[list[SpoolEntry], int]:
    """The readable entries, after naming each unreadable file on stderr; and their count."""
    entries, unreadable = Spool(directory).scan()
    for problem in unreadable:
        click.echo(f"Error: {problem}", err=True)
    return entries, len(unreadable)


@spool.command(name="list")
@_DIR
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def list_entries(directory: str, as_json: bool) -> None:
    """List spooled messages, oldest first (works without a broker).

    \b
    Example:
      rmqcompat spool list --dir /var/spool/orders --json
    """
    entries, unreadable = _readable(directory)
    rows = [
        {
            "msg_id": entry.msg_id,
            "topic": entry.record.topic,
            "bytes": len(entry.record.value),
            "spooled_at_ms": entry.spooled_at_ms,
            "code": entry.code,
            "attempts": entry.attempts,
        }
        for entry in entries
    ]
    if as_json:
        emit_json({"entries": rows, "unreadable": unreadable})
    elif rows:
        emit_table(list(rows[0]), [list(row.values()) for row in rows])
    if unreadable:
        raise SystemExit(1)


@spool.command(name="resend")
@_DIR
@click.pass_obj
def resend(obj: CliContext, directory: str) -> None:
    """Re-send every spooled message once; delete each one the broker acknowledged.

    Records go to the Kafka topic they were spooled for (their namespace included).
    Exits with status 1 if some messages are still spooled or some files are unreadable.

    \b
    Example:
      rmqcompat --bootstrap-servers kafka:9092 spool resend --dir /var/spool/orders
    """
    if not obj.bootstrap_servers:
        raise click.UsageError("--bootstrap-servers (or RMQCOMPAT_BOOTSTRAP_SERVERS) is required")
    _, unreadable = _readable(directory)
    producer = DefaultMQProducer(
        "rmqcompat-spool-cli",
        obj.bootstrap_servers,
        namespace=obj.namespace,
        kafka_config=obj.kafka_config,
        spool_dir=directory,
        spool_resend_interval_s=None,
    )
    with producer:
        sent, failed = producer.resend_spooled()
    click.echo(f"sent={sent} still_spooled={failed} unreadable={unreadable}")
    if failed or unreadable:
        raise SystemExit(1)
