"""Where a dev broker's throwaway data goes: memory when offered, else the temp dir."""

from __future__ import annotations

from pathlib import Path

import pytest

from rmqcompat.devbroker import scratch


@pytest.fixture
def memory_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "shm"
    root.mkdir()
    monkeypatch.setattr(scratch, "MEMORY_ROOT", root)
    monkeypatch.delenv("TMPDIR", raising=False)
    return root


def test_a_throwaway_dir_is_made_in_memory_when_it_is_offered(memory_root: Path) -> None:
    made = scratch.throwaway_dir("rmqcompat-test-")

    assert made.parent == memory_root
    assert made.is_dir()
    assert made.name.startswith("rmqcompat-test-")


def test_a_set_tmpdir_wins_over_memory(
    memory_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chosen = tmp_path / "chosen"
    chosen.mkdir()
    monkeypatch.setenv("TMPDIR", str(chosen))
    monkeypatch.setattr(scratch.tempfile, "tempdir", None)  # re-read TMPDIR

    assert scratch.throwaway_dir("rmqcompat-test-").parent == chosen


def test_without_memory_the_dir_goes_where_tempfile_puts_it(
    memory_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory_root.rmdir()
    monkeypatch.setattr(scratch.tempfile, "tempdir", str(tmp_path))

    assert scratch.throwaway_dir("rmqcompat-test-").parent == tmp_path


def test_a_small_memory_file_system_is_not_used(
    memory_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_usage = scratch.shutil.disk_usage

    def usage(path: str | Path) -> object:
        if Path(path) == memory_root:
            return real_usage(path)._replace(free=64 * 1024**2)  # a container's default
        return real_usage(path)

    monkeypatch.setattr(scratch.shutil, "disk_usage", usage)
    monkeypatch.setattr(scratch.tempfile, "tempdir", str(tmp_path))

    assert scratch.throwaway_dir("rmqcompat-test-").parent == tmp_path


def test_a_dir_not_asked_for_in_memory_goes_where_tempfile_puts_it(
    memory_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scratch.tempfile, "tempdir", str(tmp_path))

    assert scratch.throwaway_dir("rmqcompat-test-", in_memory=False).parent == tmp_path
