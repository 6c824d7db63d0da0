"""``rmqcompat dlq`` bad input without a broker: exit 2, one line naming the problem,
before any I/O (the bootstrap address is unroutable, so I/O would fail differently)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from rmqcompat.cli.main import EXIT_USAGE, main

NOWHERE = ["--bootstrap-servers", "127.0.0.1:1", "--timeout", "1"]


def _dlq(*args: str):
    return CliRunner().invoke(main, [*NOWHERE, "dlq", *args])


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["show", "--group", "G", "--since", "yesterday"], "'yesterday' is not a time"),
        (["show", "--group", "G", "--until", "2h ago"], "is not a time"),
        (["show", "--group", "bad group!"], "outside RocketMQ"),
        (["show", "--group", "G" * 121], "at most 120"),
        (["show"], "Missing option '--group'"),
        (["show", "--group", "G", "--limit", "0"], "--limit"),
        (["export", "--group", "G", "--out", "x.csv"], ".jsonl"),
        (["replay"], "give --group or --from-file"),
        (["replay", "--group", "G", "--rate", "0"], "--rate"),
        (["replay", "--group", "G", "--to-topic", "elsewhere"], "--to-topic"),
        (["purge", "--group", "G"], "exactly one of --before and --up-to-offset"),
        (["purge", "--group", "G", "--before", "1h", "--up-to-offset", "3"], "exactly one"),
        (["purge", "--group", "G", "--up-to-offset", "x=3"], "PARTITION=OFFSET"),
        (["purge", "--group", "G", "--before", "soon"], "is not a time"),
    ],
)
def test_bad_input_is_exit_2_with_the_problem_named(args: list[str], problem: str) -> None:
    result = _dlq(*args)
    assert result.exit_code == EXIT_USAGE, result.output
    assert problem in result.output
    assert "Traceback" not in result.output


def test_illegal_namespace_is_exit_2_before_io() -> None:
    result = CliRunner().invoke(main, [*NOWHERE, "--namespace", "a.b", "dlq", "list"])
    assert result.exit_code == EXIT_USAGE
    assert result.stderr.strip().startswith("Error: namespace 'a.b'")


def test_replay_file_that_is_not_dead_letters_is_exit_2(tmp_path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text("{}\n")
    result = _dlq("replay", "--from-file", str(path), "--yes")
    assert result.exit_code == EXIT_USAGE
    assert "d.jsonl:1: not a dead letter" in result.stderr


def test_debug_shows_the_traceback() -> None:
    result = CliRunner().invoke(main, [*NOWHERE, "--namespace", "a.b", "--debug", "dlq", "list"])
    assert result.exit_code != 0 and result.exception is not None


@pytest.mark.parametrize(("answer", "code"), [("y\n", 0), ("n\n", 1), ("\n", 1)])
def test_confirmation_on_a_terminal(monkeypatch, answer: str, code: int) -> None:
    import click

    from rmqcompat.cli import output

    @click.command()
    def risky() -> None:
        output.confirm("Delete?", assume_yes=False)
        click.echo("done")

    monkeypatch.setattr(output, "stdin_is_terminal", lambda: True)
    result = CliRunner().invoke(risky, [], input=answer)
    assert result.exit_code == code
    assert ("done" in result.stdout) == (code == 0)
    if code:
        assert "nothing was changed" in result.stderr
