"""``rmqcompat forwarder run --trace/--no-trace`` reaches the forwarder's tracer."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from rmqcompat.cli import forwarder_cmd
from rmqcompat.cli.main import main
from rmqcompat.forwarder import DelayForwarder


class _Built(DelayForwarder):
    """The real forwarder, built by the command; it returns instead of running."""

    last: DelayForwarder | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _Built.last = self

    def run_forever(self) -> None:
        pass


@pytest.mark.parametrize(
    ("flag", "traced"), [([], True), (["--trace"], True), (["--no-trace"], False)]
)
def test_trace_switch_sets_the_forwarders_tracer(
    monkeypatch: pytest.MonkeyPatch, flag: list[str], traced: bool
) -> None:
    monkeypatch.setattr(forwarder_cmd, "DelayForwarder", _Built)
    _Built.last = None
    result = CliRunner().invoke(
        main, ["--bootstrap-servers", "127.0.0.1:1", "forwarder", "run", *flag]
    )
    assert result.exit_code == 0, result.output
    assert _Built.last is not None and _Built.last.tracer.enabled is traced
