"""Global CLI settings without a broker: -X, --config (TOML, properties), secrets, exit codes."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from rmqcompat.cli.context import CliContext
from rmqcompat.cli.main import EXIT_USAGE, main
from rmqcompat.cli.settings import load_config_file, masked_command, parse_passthrough
from rmqcompat.errors import ConfigError


@click.command(name="echo-settings")
@click.pass_obj
def _echo(obj: CliContext) -> None:
    click.echo(f"{obj.bootstrap_servers}|{sorted(obj.kafka_config.items())}|{obj.timeout_s}")


@pytest.fixture
def cli() -> click.Group:
    group = click.Group(
        name=main.name, params=main.params, callback=main.callback, commands=dict(main.commands)
    )
    group.add_command(_echo)
    return group


def _run(cli: click.Group, *args: str, env: dict | None = None) -> click.testing.Result:
    return CliRunner().invoke(
        cli, list(args), env={"RMQCOMPAT_BOOTSTRAP_SERVERS": None, **(env or {})}
    )


def test_passthrough_pairs_and_bad_pairs_without_echoing_values() -> None:
    assert parse_passthrough(["a=1", " b =x=y", "c="]) == {"a": "1", "b": "x=y", "c": ""}
    for bad in ("sasl.password", "=secret"):
        with pytest.raises(ConfigError) as info:
            parse_passthrough([bad])
        assert "secret" not in str(info.value)


def test_toml_and_properties_files_give_the_same_keys(tmp_path: Path) -> None:
    toml = tmp_path / "c.toml"
    toml.write_text(
        '"bootstrap.servers" = "h:1"\nlinger.ms = 5\n[sasl]\nmechanism = "PLAIN"\nx = true\n'
    )
    props = tmp_path / "c.properties"
    props.write_text(
        "# comment\n! also\nbootstrap.servers=h:1\nlinger.ms: 5\n\n"
        "sasl.mechanism = PLAIN\nsasl.x=true\n"
    )
    expected = {
        "bootstrap.servers": "h:1",
        "linger.ms": "5",
        "sasl.mechanism": "PLAIN",
        "sasl.x": "true",
    }
    assert load_config_file(toml) == expected
    assert load_config_file(props) == expected


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("c.toml", "a = [1, 2]\n", "a must be a string"),
        ("c.toml", "a = \n", "not TOML"),
        ("c.properties", "just words\n", "c.properties:1: not key=value"),
        ("missing.properties", None, "cannot read"),
    ],
)
def test_bad_config_file_is_exit_2_naming_file_and_problem(
    cli: click.Group, tmp_path: Path, name: str, content: str | None, problem: str
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    result = _run(cli, "--config", str(path), "echo-settings")
    assert result.exit_code == EXIT_USAGE
    assert problem in result.stderr


def test_x_wins_over_the_file_and_the_flag_over_the_files_bootstrap(
    cli: click.Group, tmp_path: Path
) -> None:
    path = tmp_path / "c.properties"
    path.write_text("bootstrap.servers=file:1\nlinger.ms=5\nacks=1\n")
    result = _run(cli, "--config", str(path), "-X", "acks=all", "--timeout", "2", "echo-settings")
    assert result.output.strip() == "file:1|[('acks', 'all'), ('linger.ms', '5')]|2.0"
    flag = _run(cli, "--bootstrap-servers", "flag:1", "--config", str(path), "echo-settings")
    assert flag.output.startswith("flag:1|")
    env = _run(
        cli, "--config", str(path), "echo-settings", env={"RMQCOMPAT_BOOTSTRAP_SERVERS": "env:1"}
    )
    assert env.output.startswith("env:1|")


def test_bad_x_is_exit_2_and_never_shows_the_value(cli: click.Group) -> None:
    result = _run(cli, "-X", "sasl.passwordhunter2", "echo-settings")
    assert result.exit_code == EXIT_USAGE
    assert "hunter2" not in result.output


def test_masked_command_hides_secret_values_only() -> None:
    argv = [
        "rmqcompat",
        "-X",
        "sasl.password=hunter2",
        "-Xssl.key.password=k",
        "-X",
        "acks=1",
        "dlq",
        "replay",
        "--group",
        "G",
    ]
    masked = masked_command(argv)
    assert "hunter2" not in masked and "=k " not in masked
    assert "sasl.password=***" in masked and "acks=1" in masked and "--group G" in masked


def test_no_bootstrap_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["dlq", "list"], env={"RMQCOMPAT_BOOTSTRAP_SERVERS": None})
    assert result.exit_code == EXIT_USAGE
    assert "--bootstrap-servers" in result.output


def _commands(group: click.Group, path: tuple[str, ...] = ()):
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))
        else:
            yield (*path, name)


@pytest.mark.parametrize("path", sorted(_commands(main)), ids=" ".join)
def test_every_command_has_help_with_an_example(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(main, [*path, "--help"])
    assert result.exit_code == 0
    assert "Example" in result.output
