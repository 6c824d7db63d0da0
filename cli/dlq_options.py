"""Options shared by the ``rmqcompat dlq`` commands: the group and the filters."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from rmqcompat.cli.callbacks import parsed_by
from rmqcompat.clock import epoch_ms
from rmqcompat.dlq.filters import DeadLetterFilter, parse_time
from rmqcompat.topics.naming import validate_consumer_group

F = TypeVar("F", bound=Callable[..., Any])


#: ``--since`` / ``--until``: an ISO time, epoch ms or a relative time (before now).
to_epoch_ms = parsed_by(lambda value: parse_time(value, epoch_ms()))


def group_option(required: bool = True) -> Callable[[F], F]:
    return click.option(
        "--group",
        required=required,
        callback=parsed_by(validate_consumer_group),
        help="Logical consumer group (as in RocketMQ).",
    )


TIME_HELP = "ISO-8601 time (UTC unless it has an offset) or an age such as 90s, 30m, 2h, 7d"


def filter_options(command: F) -> F:
    """``--msg-id``, ``--key``, ``--tag`` (repeatable), ``--since``, ``--until``, ``--limit``."""
    options = [
        click.option("--msg-id", "msg_ids", multiple=True, help="Message id, origin id or DLQ id."),
        click.option("--key", "keys", multiple=True, help="One of the message's keys."),
        click.option("--tag", "tags", multiple=True, help="The message's tag."),
        click.option(
            "--since", callback=to_epoch_ms, help=f"Dead-lettered at or after: {TIME_HELP}."
        ),
        click.option("--until", callback=to_epoch_ms, help=f"Dead-lettered before: {TIME_HELP}."),
        click.option("--limit", type=click.IntRange(min=1), default=None, help="At most N."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def dead_letter_filter(options: dict[str, Any]) -> DeadLetterFilter:
    """The filter of :func:`filter_options`' values (``limit`` is not part of it)."""
    return DeadLetterFilter(
        msg_ids=frozenset(options["msg_ids"]),
        keys=frozenset(options["keys"]),
        tags=frozenset(options["tags"]),
        since_ms=options["since"],
        until_ms=options["until"],
    )
