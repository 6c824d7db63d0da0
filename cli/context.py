"""Options shared by every ``rmqcompat`` command."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CliContext:
    """The global options, stored on ``click.Context.obj`` by the ``rmqcompat`` group.

    Attributes:
        bootstrap_servers: Kafka ``bootstrap.servers``; ``None`` when not configured.
        namespace: prefix that isolates this deployment's internal topics and groups.
    """

    bootstrap_servers: str | None
    namespace: str
