"""Where ``rmqcompat dev-broker`` keeps a kafka or noida broker's temporary data: on disk
unless ``--in-memory`` (a broker a user keeps running would otherwise grow in memory with
every record it keeps); contradictory options are refused before anything starts."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from click.testing import CliRunner, Result

import rmqcompat.devbroker as devbroker
from rmqcompat.cli.main import main


class StartedBroker:
    """Records how the command built it; starts and stops at once."""

    made: ClassVar[list[tuple[tuple[Any, ...], dict[str, Any]]]] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.made.append((args, kwargs))

    def start(self) -> str:
        return "127.0.0.1:1"

    is_running = False

    def stop(self) -> None:
        pass


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    StartedBroker.made = []
    monkeypatch.setattr(devbroker, "DevBroker", StartedBroker)
    monkeypatch.setattr(devbroker, "DevCluster", StartedBroker)
    return StartedBroker.made


def _run(*args: str) -> Result:
    return CliRunner().invoke(main, ["dev-broker", *args])


@pytest.mark.parametrize("nodes", ["1", "3"])
def test_a_kafka_brokers_temporary_data_is_on_disk_by_default(made: list, nodes: str) -> None:
    result = _run("--kind", "kafka", "--nodes", nodes)

    assert "bootstrap.servers=127.0.0.1:1" in result.output
    ((_, kwargs),) = made
    assert kwargs["in_memory"] is False and kwargs["data_dir"] is None


@pytest.mark.parametrize("kind", ["kafka", "noida"])
def test_in_memory_asks_for_memory(made: list, kind: str) -> None:
    _run("--kind", kind, "--in-memory")

    ((_, kwargs),) = made
    assert kwargs["in_memory"] is True


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--kind", "tansu", "--in-memory"], "the tansu broker keeps no data"),
        (["--kind", "kafka", "--in-memory", "--data-dir", "d"], "--data-dir names the one"),
    ],
)
def test_in_memory_where_it_means_nothing_is_refused(made: list, args: list, named: str) -> None:
    result = _run(*args)

    assert result.exit_code == 2
    assert named in result.output and "--in-memory" in result.output
    assert made == []
