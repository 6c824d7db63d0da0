"""``rmqcompat --version``: the version and which per-message path is active."""

from __future__ import annotations

from click.testing import CliRunner

from rmqcompat.cli.main import main
from rmqcompat.core import implementation


def test_version_names_the_active_implementation() -> None:
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"rmqcompat 0.1.0, per-message paths: {implementation()}\n"
