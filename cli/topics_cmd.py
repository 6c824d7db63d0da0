"""``rmqcompat topics``: show, create and verify the topic topology (parse and delegate only)."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from typing import Any, TypeVar

import click

from rmqcompat.cli.context import CliContext, current
from rmqcompat.cli.inspect import describe_topics
from rmqcompat.cli.output import emit_json, emit_table
from rmqcompat.errors import TopologyError
from rmqcompat.forwarder.settings import forwarder_group
from rmqcompat.message import DEFAULT_MAX_MESSAGE_SIZE
from rmqcompat.reachability import require_broker
from rmqcompat.topics.delay_levels import DEFAULT_MESSAGE_DELAY_LEVEL, DelayLevels
from rmqcompat.topics.spec import REPLICATED, TopologySpec
from rmqcompat.topics.topology import (
    KINDS,
    Topology,
    build_topology,
    provision_topology,
    verify_topology,
    with_partitions,
    with_replication,
)
from rmqcompat.topics.verify_forwarding import unserved_level_topics

F = TypeVar("F", bound=Callable[..., Any])


def _topology_options(command: F) -> F:
    options = [
        click.option("--group", "groups", multiple=True, help="Consumer group (repeatable)."),
        click.option(
            "--simple-group",
            "simple_groups",
            multiple=True,
            help="RocketMQ 5 SimpleConsumer group: also its attempt log (repeatable).",
        ),
        click.option("--topic", "topics", multiple=True, help="Business topic (repeatable)."),
        click.option(
            "--message-delay-level",
            default=DEFAULT_MESSAGE_DELAY_LEVEL,
            show_default=True,
            help="RocketMQ delay table; one topic per level.",
        ),
        click.option(
            "--partitions",
            "partitions",
            multiple=True,
            metavar="KIND=N",
            help=f"Partition count of one kind ({', '.join(KINDS)}); repeatable.",
        ),
        click.option(
            "--replication",
            "replication",
            multiple=True,
            metavar="KIND=N",
            help=(
                "Replication factor of one kind: a number, -1 (the broker's default) or "
                "auto (min(3, brokers), 2 in sync with 3; every kind but business); "
                "repeatable."
            ),
        ),
        click.option(
            "--max-message-size",
            type=click.IntRange(min=1),
            default=DEFAULT_MAX_MESSAGE_SIZE,
            show_default=True,
            help="Largest body in bytes; sets the topics' max.message.bytes.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _per_kind(values: tuple[str, ...], hint: str, pattern: str) -> dict[str, str]:
    parsed: dict[str, str] = {}
    for value in values:
        kind, sep, setting = value.partition("=")
        if not sep or not re.fullmatch(pattern, setting.strip()):
            raise click.BadParameter(f"{value!r} is not KIND=N", param_hint=hint)
        parsed[kind.strip()] = setting.strip()
    return parsed


def _replication_factor(value: str) -> int | None:
    return REPLICATED if value == "auto" else int(value)


def _topology(ctx: CliContext, options: dict[str, Any]) -> Topology:
    partitions = _per_kind(options["partitions"], "--partitions", r"\d+")
    replication = _per_kind(options["replication"], "--replication", r"auto|-1|\d+")
    spec = with_replication(
        with_partitions(TopologySpec(), {k: int(v) for k, v in partitions.items()}),
        {kind: _replication_factor(value) for kind, value in replication.items()},
    )
    return build_topology(
        groups=options["groups"],
        simple_groups=options["simple_groups"],
        topics=options["topics"],
        levels=DelayLevels.parse(options["message_delay_level"]),
        spec=spec,
        namespace=ctx.namespace,
        max_message_size=options["max_message_size"],
    )


def _admin_settings(ctx: CliContext) -> dict[str, Any]:
    return ctx.client_config().librdkafka("admin")


@click.group(name="topics")
def topics() -> None:
    """Show, create and verify the Kafka topics behind RocketMQ's logical names.

    \b
    Example:
      rmqcompat topics names --group G --topic Orders
    """


@topics.command(name="names")
@_topology_options
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def names(as_json: bool, **options: Any) -> None:
    """Print every logical name of the topology with its physical Kafka name (no broker).

    \b
    Example:
      rmqcompat --namespace prod topics names --group G --topic Orders --json
    """
    mapping = _topology(current(), options).names()
    if as_json:
        click.echo(json.dumps(mapping, indent=2))
    else:
        for logical, physical in mapping.items():
            click.echo(f"{logical}\t{physical}")


@topics.command(name="create")
@_topology_options
def create(**options: Any) -> None:
    """Create the missing topics of the topology (idempotent).

    \b
    Example:
      rmqcompat topics create --group G --topic Orders --partitions business=8
    """
    ctx = current()
    topology = _topology(ctx, options)
    result = provision_topology(_admin_settings(ctx), topology)
    for name in result.created:
        click.echo(f"created\t{name}")
    for name in result.existing:
        click.echo(f"exists\t{name}")


@topics.command(name="verify")
@_topology_options
def verify(**options: Any) -> None:
    """Check existence, partition counts and configs; exit 1 on any mismatch.

    Also lists the namespace's level topics that no forwarder consumes (their parked
    messages wait until one does); those are warnings, not mismatches, so the check
    passes before the forwarders start.

    \b
    Example:
      rmqcompat topics verify --group G --topic Orders
    """
    ctx = current()
    topology = _topology(ctx, options)
    report = verify_topology(_admin_settings(ctx), topology)
    for item in report.unchecked:
        click.echo(f"not described by the broker (unchecked): {item}", err=True)
    _echo_unserved(ctx)
    click.echo(str(report))
    if not report.ok:
        raise SystemExit(1)


@topics.command(name="describe")
@_topology_options
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def describe(as_json: bool, **options: Any) -> None:
    """Each topic of the topology as the broker has it now: partitions, start and end
    offsets, retention, and the records waiting (parked on a delay level and not yet
    forwarded; dead letters).

    \b
    Example:
      rmqcompat topics describe --group G --topic Orders --json
    """
    ctx = current()
    topology = _topology(ctx, options)
    config = ctx.client_config()
    require_broker(config)
    states = [dataclasses.asdict(state) for state in describe_topics(config, topology)]
    if as_json:
        emit_json({"topics": states})
        return
    columns = ("physical", "kind", "exists", "partitions", "end_offsets", "retention_ms", "waiting")
    emit_table(columns, [[state[c] for c in columns] for state in states])


def _echo_unserved(ctx: CliContext) -> None:
    group = forwarder_group(ctx.namespace)
    try:
        unserved = unserved_level_topics(_admin_settings(ctx), ctx.namespace, group)
    except TopologyError as exc:
        click.echo(f"warning: {exc}", err=True)
        return
    for topic in unserved:
        click.echo(f"warning: no member of forwarder group {group} consumes {topic}", err=True)
