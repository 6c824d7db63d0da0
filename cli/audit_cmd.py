"""``rmqcompat audit``: the Spark audit of the trace topic (needs the ``spark`` extra).

Parses options and delegates to :mod:`rmqcompat.spark.job`; pyspark is imported only
when the command runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from click.decorators import FC

from rmqcompat.cli.callbacks import parsed_by
from rmqcompat.cli.context import current
from rmqcompat.cli.settings import parse_passthrough
from rmqcompat.errors import ConfigError
from rmqcompat.spark.master import check_master
from rmqcompat.topics.delay_levels import (
    DEFAULT_MESSAGE_DELAY_LEVEL,
    DelayLevels,
    parse_duration_ms,
)


def _pairs(ctx: click.Context, param: click.Parameter, values: Sequence[str]) -> dict[str, str]:
    try:
        return parse_passthrough(values)
    except ConfigError:
        raise click.BadParameter("every value must be KEY=VALUE", ctx, param) from None


def _instant(ctx: click.Context, param: click.Parameter, value: str | None) -> int | None:
    """Epoch milliseconds, or an ISO-8601 time (UTC when it names no zone)."""
    if value is None:
        return None
    if value.isdigit():
        return int(value)
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is neither epoch ms nor an ISO-8601 time", ctx, param
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def _duration(name: str, default: str, text: str) -> Callable[[FC], FC]:
    """An option taking a duration (``500ms``, ``10s``, ``1m``) as milliseconds."""
    callback = parsed_by(parse_duration_ms)
    return click.option(name, default=default, show_default=True, callback=callback, help=text)


@click.command()
@click.option("--group", default=None, help="Report only this consumer group.")
@click.option("--topic", default=None, help="Report only this logical topic.")
@click.option("--since", callback=_instant, help="Only events at or after (epoch ms or ISO-8601).")
@click.option("--until", callback=_instant, help="Only events before (epoch ms or ISO-8601).")
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory for report.json, outcomes/ (Parquet) and the PNG charts.",
)
@click.option("--stream", is_flag=True, help="Structured streaming with --checkpoint.")
@click.option(
    "--checkpoint", type=click.Path(file_okay=False, path_type=Path), help="Streaming checkpoint."
)
@click.option(
    "--trigger-interval",
    default=None,
    help="Streaming trigger, e.g. '30 seconds' (default: availableNow, then exit).",
)
@click.option(
    "--now",
    callback=_instant,
    help="Judge 'lost' as of this time (epoch ms or ISO-8601; default: now).",
)
@click.option(
    "--master",
    default="local[*]",
    show_default=True,
    callback=parsed_by(check_master),
    help="Spark master URL.",
)
@_duration("--grace", "10m", "How long a message may go without events before it counts as lost.")
@_duration(
    "--ladder-early",
    "1s",
    "A retry delivered more than this before the due time its send-back recorded"
    " breaks the ladder.",
)
@_duration(
    "--ladder-late",
    "60s",
    "A retry delivered more than this after the due time its send-back recorded"
    " breaks the ladder (forwarder lateness plus consumer lag).",
)
@_duration(
    "--forward-late", "1s", "A forward more than this after its due time counts in late_forwards."
)
@click.option(
    "--message-delay-level",
    default=DEFAULT_MESSAGE_DELAY_LEVEL,
    show_default=True,
    help="The delay table of clients that trace send-backs without a due time (older"
    " releases): their retries are judged against it. Others are judged against the"
    " due time they recorded, whatever their table.",
)
@click.option(
    "--jars-dir",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Resolved connector jars (offline); default: resolve from Maven Central.",
)
@click.option(
    "--spark-conf", multiple=True, callback=_pairs, metavar="KEY=VALUE", help="Spark setting."
)
@click.option(
    "--kafka-option",
    multiple=True,
    callback=_pairs,
    metavar="KEY=VALUE",
    help="Kafka (Java client) setting for Spark's source, e.g. sasl.jaas.config=...",
)
@click.option("--no-lag", is_flag=True, help="Skip the committed-offset lag query.")
def audit(**options: Any) -> None:
    """Audit the namespace's flows from its trace topic through Spark's Kafka source.

    Prints one line per group and topic and writes report.json, outcomes/ and charts.

    \b
    Example:
      rmqcompat --namespace prod audit --group OrderGroup --out audit/
      rmqcompat --namespace prod audit --out audit/ --stream --checkpoint ckpt/
    """
    if options["stream"] and options["checkpoint"] is None:
        raise click.UsageError("--stream needs --checkpoint DIR")
    try:
        levels = DelayLevels.parse(options["message_delay_level"])
    except ConfigError as exc:
        raise click.BadParameter(str(exc), param_hint="--message-delay-level") from None
    _run(options, levels)


def _run(options: dict[str, Any], levels: DelayLevels) -> None:
    """Builds the audit's settings from the options and runs it
    (:func:`rmqcompat.spark.run.run_audit`), printing its table."""
    try:
        from rmqcompat.spark.audit import AuditPolicy
        from rmqcompat.spark.job import AuditJob
        from rmqcompat.spark.report import format_table
        from rmqcompat.spark.run import SparkOptions, StreamOptions, run_audit
    except ImportError as exc:
        raise ConfigError(
            f"audit needs the spark extra: pip install 'rmqcompat[spark]' ({exc})"
        ) from None
    job = AuditJob(
        current().client_config(),
        AuditPolicy(
            now_ms=options["now"] or int(time.time() * 1000),
            grace_ms=options["grace"],
            levels=levels,
            early_ms=options["ladder_early"],
            late_ms=options["ladder_late"],
            forward_late_ms=options["forward_late"],
        ),
        spark_kafka=options["kafka_option"],
        group=options["group"],
        topic=options["topic"],
        since_ms=options["since"],
        until_ms=options["until"],
        lag=not options["no_lag"],
    )
    spark = SparkOptions(
        master=options["master"],
        jars_dir=options["jars_dir"],
        conf=options["spark_conf"],
        # failures are reported in one line (AuditError); Spark's log would repeat them
        # with the JVM's stack traces (--debug keeps its WARN level)
        quiet=not click.get_current_context().find_root().params.get("debug"),
    )
    stream = StreamOptions(options["checkpoint"], options["trigger_interval"])
    out: Path = options["out"]

    def print_report(report: dict[str, Any]) -> None:
        click.echo(format_table(report))
        click.echo(f"report: {out / 'report.json'}")

    run_audit(
        job,
        out,
        spark,
        stream=stream if options["stream"] else None,
        on_report=print_report,
        notice=lambda text: click.echo(text, err=True),
    )
