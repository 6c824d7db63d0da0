"""``rmqcompat topics`` without a broker: names as JSON, and input errors before any I/O."""

from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner

from rmqcompat.cli.main import main
from rmqcompat.cli.topics_cmd import topics

LEVELS = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h".split()


@pytest.fixture
def cli() -> click.Group:
    """The real ``rmqcompat`` group (global options included) with ``topics`` registered."""
    if "topics" in main.commands:
        return main
    return click.Group(
        name=main.name,
        params=main.params,
        callback=main.callback,
        commands={**main.commands, "topics": topics},
    )


def _run(cli: click.Group, *args: str) -> click.testing.Result:
    return CliRunner().invoke(cli, list(args), env={"RMQCOMPAT_BOOTSTRAP_SERVERS": None})


def test_names_json_maps_every_logical_name_under_the_namespace(cli: click.Group) -> None:
    result = _run(
        cli, "--namespace", "prod", "topics", "names", "--group", "G", "--topic", "T", "--json"
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {
        "T": "prod.T",
        "%RETRY%G": "prod.rmq.retry.G",
        "%DLQ%G": "prod.rmq.dlq.G",
        **{f"%SCHEDULE%{d}": f"prod.rmq.delay.{d}" for d in LEVELS},
        "RMQ_SYS_TRACE_TOPIC": "prod.rmq.trace",
        "RMQ_SYS_QUARANTINE_TOPIC": "prod.rmq.quarantine",
        "RMQ_SYS_RECALL_TOPIC": "prod.rmq.recall",
        "RMQ_SYS_REPLAY_LOG": "prod.rmq.replay-log",
    }


def test_a_simple_consumer_group_adds_its_attempt_log(cli: click.Group) -> None:
    result = _run(cli, "topics", "names", "--simple-group", "S", "--json")
    assert result.exit_code == 0, result.output
    names = json.loads(result.output)
    assert names["%ATTEMPT%S"] == "rmq.attempt.S" and names["%RETRY%S"] == "rmq.retry.S"


def test_names_json_without_namespace_and_with_repeated_options(cli: click.Group) -> None:
    args = ["topics", "names", "--group", "A", "--group", "B", "--topic", "T1", "--topic", "T2"]
    args += ["--message-delay-level", "100ms 1s", "--json"]
    result = _run(cli, *args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {
        "T1": "T1",
        "T2": "T2",
        "%RETRY%A": "rmq.retry.A",
        "%DLQ%A": "rmq.dlq.A",
        "%RETRY%B": "rmq.retry.B",
        "%DLQ%B": "rmq.dlq.B",
        "%SCHEDULE%100ms": "rmq.delay.100ms",
        "%SCHEDULE%1s": "rmq.delay.1s",
        "RMQ_SYS_TRACE_TOPIC": "rmq.trace",
        "RMQ_SYS_QUARANTINE_TOPIC": "rmq.quarantine",
        "RMQ_SYS_RECALL_TOPIC": "rmq.recall",
        "RMQ_SYS_REPLAY_LOG": "rmq.replay-log",
    }


def test_names_as_text_has_one_line_per_topic(cli: click.Group) -> None:
    result = _run(cli, "topics", "names", "--group", "G", "--message-delay-level", "1s")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "%RETRY%G\trmq.retry.G",
        "%DLQ%G\trmq.dlq.G",
        "%SCHEDULE%1s\trmq.delay.1s",
        "RMQ_SYS_TRACE_TOPIC\trmq.trace",
        "RMQ_SYS_QUARANTINE_TOPIC\trmq.quarantine",
        "RMQ_SYS_RECALL_TOPIC\trmq.recall",
        "RMQ_SYS_REPLAY_LOG\trmq.replay-log",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["topics", "names", "--group", "a.b"], "^[%|a-zA-Z0-9_-]+$"),
        (["--namespace", "rmq", "topics", "names"], "reserved"),
        (["topics", "names", "--message-delay-level", "5s 1x"], "<number><ms"),
        (["topics", "names", "--partitions", "nope=2"], "unknown topic kind"),
        (["topics", "names", "--partitions", "business"], "KIND=N"),
        (["topics", "names", "--replication", "dlq=three"], "KIND=N"),
        (["topics", "names", "--replication", "dlq=0"], "replication_factor must be >= 1"),
        (["topics", "names", "--replication", "nope=3"], "unknown topic kind"),
        (["topics", "create", "--group", "G"], "RMQCOMPAT_BOOTSTRAP_SERVERS"),
        (["topics", "verify", "--group", "G"], "RMQCOMPAT_BOOTSTRAP_SERVERS"),
        (["topics", "create", "--group", "a.b"], "^[%|a-zA-Z0-9_-]+$"),
    ],
)
def test_bad_input_is_a_clear_error_without_traceback(
    cli: click.Group, args: list[str], message: str
) -> None:
    result = _run(cli, *args)
    assert result.exit_code != 0
    assert message in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
