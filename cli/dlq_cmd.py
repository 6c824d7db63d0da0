"""``rmqcompat dlq list | show | export``: find dead letters and why (parse and delegate)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from rmqcompat.cli import context
from rmqcompat.cli.dlq_options import dead_letter_filter, filter_options, group_option
from rmqcompat.cli.dlq_replay_cmd import purge, replay
from rmqcompat.cli.output import emit_json, emit_table, iso, progress, shows_progress
from rmqcompat.dlq.files import file_format, write_dead_letters
from rmqcompat.dlq.reader import list_dead_letter_groups, read_dead_letters
from rmqcompat.reachability import require_broker


@click.group(name="dlq")
def dlq() -> None:
    """Dead letters (%DLQ%<group>): list, show, export, replay, purge.

    \b
    Example:
      rmqcompat dlq show --group order_consumer --since 2h
    """


@dlq.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def list_groups(as_json: bool) -> None:
    """Every group of the namespace with dead letters: count, oldest and newest time.

    \b
    Example:
      rmqcompat --namespace prod dlq list --json
    """
    config = context.current().client_config()
    require_broker(config)
    groups = list_dead_letter_groups(config)
    rows = [
        {
            "group": item.group,
            "topic": item.topic,
            "count": item.count,
            "oldest": iso(item.oldest_ms),
            "newest": iso(item.newest_ms),
        }
        for item in groups
    ]
    if as_json:
        emit_json({"groups": rows})
    elif not rows:
        click.echo("no dead letters in this namespace")
    else:
        columns = ("group", "count", "oldest", "newest", "topic")
        emit_table(columns, [[row[c] for c in columns] for row in rows])


_SHOW_COLUMNS = (
    "msg_id",
    "origin_msg_id",
    "original_topic",
    "tags",
    "keys",
    "reconsume_times",
    "born",
    "dead",
    "body_preview",
)


@dlq.command(name="show")
@group_option()
@filter_options
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def show(group: str, as_json: bool, limit: int | None, **filters: Any) -> None:
    """The dead letters of a group, with why and when, filtered.

    \b
    Example:
      rmqcompat dlq show --group order_consumer --since 2h --tag TagA --limit 20
    """
    config = context.current().client_config()
    where = dead_letter_filter(filters)
    require_broker(config)
    letters = list(read_dead_letters(config, group, where, limit))
    if as_json:
        emit_json({"group": group, "dead_letters": [letter.summary() for letter in letters]})
        return
    rows = [
        {**letter.summary(), "born": iso(letter.born_ms), "dead": iso(letter.dead_ms)}
        for letter in letters
    ]
    emit_table(_SHOW_COLUMNS, [[row[c] for c in _SHOW_COLUMNS] for row in rows])


@dlq.command(name="export")
@group_option()
@filter_options
@click.option(
    "--out",
    required=True,
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="File to write: .jsonl (JSON Lines, bodies base64) or .avro (Avro container).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def export(group: str, out: Path, as_json: bool, limit: int | None, **filters: Any) -> None:
    """Write dead letters to a file, headers intact; `dlq replay --from-file` sends it back.

    \b
    Example:
      rmqcompat dlq export --group order_consumer --since 1d --out dead.jsonl
    """
    config = context.current().client_config()
    where = dead_letter_filter(filters)
    file_format(out)  # an unknown extension is refused before any I/O
    require_broker(config)
    with progress(None, "exporting", shows_progress(as_json)) as advance:
        letters = read_dead_letters(config, group, where, limit)
        count = write_dead_letters(out, _advancing(letters, advance))
    if as_json:
        emit_json({"group": group, "file": str(out), "exported": count})
    else:
        click.echo(f"exported {count} dead letters of {group} to {out}")


def _advancing(items: Any, advance: Any) -> Any:
    for item in items:
        advance(1)
        yield item


dlq.add_command(replay)
dlq.add_command(purge)
