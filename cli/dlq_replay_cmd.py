"""``rmqcompat dlq replay | purge``: send dead letters back, or drop them (parse and delegate)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any, cast

import click

from rmqcompat.cli import context
from rmqcompat.cli.collector import collector_paused
from rmqcompat.cli.dlq_options import (
    TIME_HELP,
    dead_letter_filter,
    filter_options,
    group_option,
    to_epoch_ms,
)
from rmqcompat.cli.output import confirm, emit_json, emit_table, progress, shows_progress
from rmqcompat.cli.settings import masked_command
from rmqcompat.config import ClientConfig
from rmqcompat.dlq.files import read_dead_letters_file
from rmqcompat.dlq.filters import DeadLetterFilter
from rmqcompat.dlq.model import DeadLetter
from rmqcompat.dlq.purge import purge as purge_records
from rmqcompat.dlq.purge import purge_points
from rmqcompat.dlq.reader import read_dead_letters
from rmqcompat.dlq.replay import Operator, Replayer, ReplayOptions, ReplaySummary
from rmqcompat.dlq.republish import TARGETS, Target
from rmqcompat.reachability import require_broker


@click.command(name="replay")
@group_option(required=False)
@filter_options
@click.option(
    "--from-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Replay the dead letters of an exported (maybe edited) .jsonl or .avro file.",
)
@click.option(
    "--to-topic",
    type=click.Choice(TARGETS),
    default="retry",
    show_default=True,
    help="retry: %RETRY%<group>, only the failing group; original: the original topic, "
    "for EVERY group subscribed to it.",
)
@click.option("--dry-run", is_flag=True, help="List what would be replayed; write nothing.")
@click.option("--rate", type=click.FloatRange(min=0, min_open=True), help="At most N msgs/s.")
@click.option("--force", is_flag=True, help="Replay dead letters replayed before, too.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option(
    "--trace/--no-trace",
    default=True,
    show_default=True,
    help="Write REPLAY events to the namespace's trace topic.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def replay(
    group: str | None,
    from_file: Path | None,
    to_topic: str,
    dry_run: bool,
    rate: float | None,
    force: bool,
    yes: bool,
    trace: bool,
    as_json: bool,
    limit: int | None,
    **filters: Any,
) -> None:
    """Send dead letters back, exactly once per dead letter across every host.

    By default to %RETRY%<group>: only that group consumes them again, under their
    original topic, with reconsume times 0. A dead letter replayed before is skipped
    unless --force; each replay is recorded in the ledger topic (who, when, which
    message, which command). A replay that stopped part way can be run again: it sends
    only the rest. Exit 1 if any dead letter was not replayed.

    \b
    Examples:
      rmqcompat dlq replay --group order_consumer --since 2h --dry-run
      rmqcompat dlq replay --group order_consumer --msg-id 7F00...01 --yes
      rmqcompat dlq replay --from-file dead.jsonl --rate 100 --yes
    """
    if group is None and from_file is None:
        raise click.UsageError("give --group or --from-file")
    ctx = context.current()
    config = ctx.client_config()
    options = ReplayOptions(target=cast(Target, to_topic), force=force, rate=rate)
    where = dead_letter_filter(filters)
    from_disk = _file_letters(from_file, group, where, limit) if from_file else None
    require_broker(config)
    if from_disk is None:
        assert group is not None
        from_disk = {group: list(read_dead_letters(config, group, where, limit))}
    operator = Operator.current(masked_command(context.argv()))
    results = {}
    for name, letters in from_disk.items():
        results[name] = _replay_group(
            config,
            name,
            letters,
            operator,
            options,
            dry_run=dry_run,
            yes=yes,
            trace=trace,
            as_json=as_json,
        )
    if as_json:
        emit_json({"dry_run": dry_run, "groups": results})
    if any(result.get("failed") or result.get("stopped") for result in results.values()):
        raise SystemExit(1)


def _file_letters(
    path: Path, group: str | None, where: DeadLetterFilter, limit: int | None
) -> dict[str, list[DeadLetter]]:
    by_group: dict[str, list[DeadLetter]] = defaultdict(list)
    taken = 0
    for letter in read_dead_letters_file(path):
        if (group is None or letter.group == group) and where.matches(letter):
            if limit is not None and taken >= limit:
                break
            by_group[letter.group].append(letter)
            taken += 1
    return dict(by_group)


def _replay_group(
    config: ClientConfig,
    group: str,
    letters: list[DeadLetter],
    operator: Operator,
    options: ReplayOptions,
    *,
    dry_run: bool,
    yes: bool,
    trace: bool,
    as_json: bool,
) -> dict[str, Any]:
    replayer = Replayer(config, group, operator, options, trace_enabled=trace)
    send, skip = replayer.plan(letters)
    if dry_run:
        return _report_dry_run(group, send, skip, as_json)
    if not send:
        return _report(group, ReplaySummary(skipped=len(skip)), as_json)
    destination = "%RETRY%" + group if options.target == "retry" else "their original topics"
    if options.target == "original":
        click.echo(
            "WARNING: --to-topic original delivers to EVERY consumer group subscribed to "
            f"the original topic, not only {group}",
            err=True,
        )
    confirm(f"Replay {len(send)} dead letters of {group} to {destination}?", yes)
    with progress(len(send), f"replaying {group}", shows_progress(as_json)) as advance:
        replayer = Replayer(config, group, operator, options, progress=advance, trace_enabled=trace)
        with collector_paused():  # this process's choice (cli/collector.py), not the library's
            summary = replayer.run(letters)
    return _report(group, summary, as_json)


def _report_dry_run(
    group: str, send: list[DeadLetter], skip: list[DeadLetter], as_json: bool
) -> dict[str, Any]:
    if not as_json:
        click.echo(f"{group}: would replay {len(send)}, skip {len(skip)} (replayed before)")
        columns = ("dlq_id", "msg_id", "original_topic", "tags")
        emit_table(columns, [[letter.summary()[c] for c in columns] for letter in send])
    return {
        "would_replay": [letter.summary() for letter in send],
        "skipped": [letter.dlq_id for letter in skip],
    }


def _report(group: str, summary: ReplaySummary, as_json: bool) -> dict[str, Any]:
    for problem in summary.problems:
        click.echo(f"Error: {group}: {problem}", err=True)
    if summary.stopped:
        click.echo(
            f"Error: {group}: replay stopped ({summary.stopped}); run it again to send the rest",
            err=True,
        )
    _say(
        f"{group}: replayed={summary.replayed} skipped={summary.skipped} failed={summary.failed}",
        as_json,
    )
    return {
        "replayed": summary.replayed,
        "skipped": summary.skipped,
        "failed": summary.failed,
        "stopped": summary.stopped,
    }


def _say(line: str, as_json: bool) -> None:
    if not as_json:
        click.echo(line)


def _offsets(_ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]) -> Any:
    parsed: dict[int | None, int] = {}
    for value in values:
        partition, sep, offset = value.rpartition("=")
        if not offset.isdigit() or (sep and not partition.isdigit()):
            raise click.BadParameter(f"{value!r} is not OFFSET or PARTITION=OFFSET")
        parsed[int(partition) if sep else None] = int(offset)
    return parsed


@click.command(name="purge")
@group_option()
@click.option(
    "--before", callback=to_epoch_ms, help=f"Drop dead letters older than this: {TIME_HELP}."
)
@click.option(
    "--up-to-offset",
    "up_to",
    multiple=True,
    callback=_offsets,
    metavar="[P=]OFFSET",
    help="Drop every record below OFFSET (of partition P; repeatable).",
)
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def purge(
    group: str, before: int | None, up_to: dict[int | None, int], yes: bool, as_json: bool
) -> None:
    """Drop a group's oldest dead letters for good (DeleteRecords); other groups untouched.

    \b
    Examples:
      rmqcompat dlq purge --group order_consumer --before 30d
      rmqcompat dlq purge --group order_consumer --up-to-offset 0=1200 --yes
    """
    if (before is None) == (not up_to):
        raise click.UsageError("give exactly one of --before and --up-to-offset")
    config = context.current().client_config()
    require_broker(config)
    points = purge_points(config, group, before_ms=before, up_to=up_to or None)
    rows = [[p, old, new, new - old] for p, (old, new) in points.items()]
    if not as_json:
        emit_table(("partition", "start", "new_start", "dropped"), rows)
    if rows:
        total = sum(row[3] for row in rows)
        confirm(f"Delete {total} dead letters of {group} for good?", yes)
    deleted = purge_records(config, group, points)
    if as_json:
        emit_json({"group": group, "deleted": deleted, "partitions": rows})
    else:
        click.echo(f"{group}: deleted {deleted} dead letters")
