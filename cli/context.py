"""Options shared by every ``rmqcompat`` command."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import click

from rmqcompat.config import ClientConfig


@dataclass(frozen=True)
class CliContext:
    """The global options, stored on ``click.Context.obj`` by the ``rmqcompat`` group.

    Attributes:
        bootstrap_servers: Kafka ``bootstrap.servers``; ``None`` when not configured.
        namespace: prefix that isolates this deployment's internal topics and groups.
        kafka_config: librdkafka settings from ``--config`` and ``-X`` (``-X`` wins).
        timeout_s: how long a command waits for a broker to answer before it fails.
    """

    bootstrap_servers: str | None
    namespace: str
    kafka_config: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float = 10.0

    def client_config(self) -> ClientConfig:
        """The client settings of a command that talks to a broker.

        Raises:
            click.UsageError: no bootstrap servers are configured.
            ConfigError / InvalidNameError: a setting or the namespace is invalid.
        """
        if not self.bootstrap_servers:
            raise click.UsageError(
                "no Kafka cluster: pass --bootstrap-servers or set RMQCOMPAT_BOOTSTRAP_SERVERS"
            )
        return ClientConfig(
            self.bootstrap_servers,
            namespace=self.namespace,
            kafka_config=self.kafka_config,
            start_timeout_s=self.timeout_s,
        )


#: ``click.Context.meta`` key of the command line as given (``rmqcompat`` and its arguments),
#: kept for records that name the command (the replay ledger); read with :func:`argv`.
ARGV_KEY = "rmqcompat.argv"


def argv() -> list[str]:
    """The command line of the running command, as the user gave it (under ``CliRunner``
    too, where ``sys.argv`` is the test runner's)."""
    return list(click.get_current_context().meta.get(ARGV_KEY, ["rmqcompat"]))


def current() -> CliContext:
    """The global options of the running command (defaults outside the ``rmqcompat`` group)."""
    obj = click.get_current_context().find_object(CliContext)
    return obj if obj is not None else CliContext(bootstrap_servers=None, namespace="")
