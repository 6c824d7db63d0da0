"""docker/: the files are consistent (no Docker engine runs here, so nothing is started).

The YAML parses; every file it refers to exists; the Dockerfile copies only existing
paths and runs ``rmqcompat``; every rmqcompat service's command line is accepted by the
real ``rmqcompat`` click command."""

from __future__ import annotations

import re
import shlex
import warnings
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from rmqcompat.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"
_DEFAULTED = re.compile(r"\$\{([A-Z_]+):-([^}]*)\}")


def _compose() -> dict[str, Any]:
    return yaml.safe_load((DOCKER / "compose.yaml").read_text())


def _rmqcompat_services() -> dict[str, dict[str, Any]]:
    return {
        name: service
        for name, service in _compose()["services"].items()
        if service.get("image") == "rmqcompat:local"
    }


def _substituted(word: str) -> str:
    assert "$" not in _DEFAULTED.sub("", word), f"{word!r}: every variable needs a :-default"
    return _DEFAULTED.sub(lambda m: m.group(2), word)


def test_compose_has_kafka_provisioning_forwarder_and_demo() -> None:
    services = _compose()["services"]
    assert services["kafka"]["image"].startswith("apache/kafka:")
    assert set(_rmqcompat_services()) == {"topics", "forwarder", "demo"}
    assert services["forwarder"]["depends_on"]["topics"]["condition"] == (
        "service_completed_successfully"
    )


def test_build_context_dockerfile_and_copied_paths_exist() -> None:
    for service in _rmqcompat_services().values():
        context = (DOCKER / service["build"]["context"]).resolve()
        assert context == ROOT
        assert (context / service["build"]["dockerfile"]).is_file()
    dockerfile = (DOCKER / "Dockerfile").read_text().splitlines()
    copies = [line.split()[1:-1] for line in dockerfile if line.startswith("COPY ")]
    assert copies
    for sources in copies:
        for source in sources:
            assert (ROOT / source).exists(), source
    entrypoint = next(line for line in dockerfile if line.startswith("ENTRYPOINT"))
    assert entrypoint == 'ENTRYPOINT ["rmqcompat"]'


def test_every_package_folder_of_pyproject_is_copied_into_the_image() -> None:
    import tomllib

    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    copied = {
        line.split()[1]
        for line in (DOCKER / "Dockerfile").read_text().splitlines()
        if line.startswith("COPY ")
    }
    assert set(mapping["package-dir"].values()) <= copied


def _parse(argv: list[str]) -> list[str]:
    """Parse ``argv`` the way ``rmqcompat`` would, without running anything; the command
    path it resolves to."""
    ctx = main.make_context("rmqcompat", list(argv))
    path, command, args = [], main, _rest(ctx)
    while isinstance(command, click.Group):
        name, command, args = command.resolve_command(ctx, args)
        assert command is not None
        path.append(name)
        ctx = command.make_context(name, args, parent=ctx)
        args = _rest(ctx)
    return path


def _rest(ctx: click.Context) -> list[str]:
    # click 8.2 splits the unparsed words in two (and deprecates that); 9.0 keeps ``args``
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return [*getattr(ctx, "protected_args", []), *ctx.args]


@pytest.mark.parametrize("name", sorted(_rmqcompat_services()))
def test_service_command_lines_are_ones_the_cli_accepts(name: str) -> None:
    service = _rmqcompat_services()[name]
    command = service["command"]
    argv = shlex.split(command) if isinstance(command, str) else [str(w) for w in command]
    path = _parse([_substituted(word) for word in argv])
    assert (
        path
        == {"topics": ["topics", "create"], "forwarder": ["forwarder", "run"], "demo": ["demo"]}[
            name
        ]
    )
    assert service["environment"]["RMQCOMPAT_BOOTSTRAP_SERVERS"] == "kafka:19092"


def test_a_wrong_forwarder_option_would_be_caught() -> None:
    with pytest.raises(click.UsageError):
        _parse(["forwarder", "run", "--metrics-prot", "9400"])
