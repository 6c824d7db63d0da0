"""``rmqcompat forwarder run``: ``--trace/--no-trace`` reaches the forwarder's tracer, and
the service runs with the collector tuned for it."""

from __future__ import annotations

import gc
from typing import Any

import pytest
from click.testing import CliRunner

from rmqcompat.cli import forwarder_cmd
from rmqcompat.cli.collector import SERVICE_YOUNG_THRESHOLD, collector_tuned_for_service
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


class _Observed(_Built):
    """Records the collector's settings while the service runs."""

    seen: tuple[int, int] | None = None

    def run_forever(self) -> None:
        _Observed.seen = (gc.get_threshold()[0], gc.get_freeze_count())


def test_the_forwarder_runs_with_the_collector_tuned_and_restored_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(forwarder_cmd, "DelayForwarder", _Observed)
    before = gc.get_threshold()
    result = CliRunner().invoke(main, ["--bootstrap-servers", "127.0.0.1:1", "forwarder", "run"])
    assert result.exit_code == 0, result.output
    assert _Observed.seen is not None
    young, frozen = _Observed.seen
    assert young == SERVICE_YOUNG_THRESHOLD
    assert frozen > 0  # what start-up built is out of the collections
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_a_larger_young_threshold_than_the_services_is_kept() -> None:
    before = gc.get_threshold()
    gc.set_threshold(SERVICE_YOUNG_THRESHOLD * 2, *before[1:])
    try:
        with collector_tuned_for_service():
            assert gc.get_threshold()[0] == SERVICE_YOUNG_THRESHOLD * 2
    finally:
        gc.set_threshold(*before)
