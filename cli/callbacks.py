"""Option callbacks: a value parsed by a function of the SDK, its refusal a usage error."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

from rmqcompat.errors import ConfigError, InvalidNameError

T = TypeVar("T")
Callback = Callable[[click.Context, click.Parameter, "str | None"], "T | None"]


def parsed_by(parse: Callable[[str], T]) -> Callback[T]:
    """A click callback giving ``parse(value)`` (an absent value stays None); the
    :class:`ConfigError` or :class:`InvalidNameError` it raises becomes a usage error
    (exit code 2) naming the option, with the error's text."""

    def callback(ctx: click.Context, param: click.Parameter, value: str | None) -> T | None:
        if value is None:
            return None
        try:
            return parse(value)
        except (ConfigError, InvalidNameError) as exc:
            raise click.BadParameter(str(exc), ctx, param) from None

    return callback
