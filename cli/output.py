"""How commands print: one JSON document (``--json``) or an aligned table; progress bars
only for a person watching (stdout a terminal, no ``--json``); confirmations."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import click


def emit_json(document: Any) -> None:
    click.echo(json.dumps(document, indent=2, sort_keys=True))


def emit_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Columns padded to their widest cell; ``-`` for None."""
    cells = [[_cell(value) for value in row] for row in rows]
    widths = [max([len(c), *(len(row[i]) for row in cells)]) for i, c in enumerate(columns)]
    click.echo("  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip())
    for row in cells:
        click.echo("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip())


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, list | tuple):
        return ",".join(str(item) for item in value) or "-"
    return " ".join(str(value).split())


def iso(epoch_ms: int | None) -> str | None:
    """UTC ISO-8601 text of epoch milliseconds (None stays None)."""
    if epoch_ms is None:
        return None
    return datetime.fromtimestamp(epoch_ms / 1000, UTC).isoformat(timespec="milliseconds")


def shows_progress(as_json: bool) -> bool:
    return not as_json and sys.stdout.isatty()


@contextmanager
def progress(total: int | None, label: str, enabled: bool) -> Iterator[Callable[[int], None]]:
    """A callback advancing a progress bar (on stderr) by n; a no-op when not enabled."""
    if not enabled:
        yield lambda _n: None
        return
    bar: Any
    with click.progressbar(length=total, label=label, file=sys.stderr) as bar:
        yield bar.update


def stdin_is_terminal() -> bool:
    return sys.stdin.isatty()


def confirm(question: str, assume_yes: bool) -> None:
    """Ask ``question``; abort (exit 1) on no. Without a terminal on stdin, refuse (usage:
    exit 2) unless ``assume_yes``.
    """
    if assume_yes:
        return
    if not stdin_is_terminal():
        raise click.UsageError("refusing without --yes: stdin is not a terminal to confirm on")
    if not click.confirm(question, default=False, err=True):
        click.echo("aborted: nothing was changed", err=True)
        raise SystemExit(1)
