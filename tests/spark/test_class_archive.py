"""The class archive's rules: its name follows the JVM and Spark, a JVM maps it once
published or writes it if missing, and only a complete file is published (no JVM here)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pyspark
import pytest

from rmqcompat.spark.class_archive import QUIET, STALE_AFTER_S, ClassArchive
from rmqcompat.spark.session import session_config


def _java(home: Path) -> Path:
    java = home / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text("#!/bin/sh\n")
    java.chmod(0o755)
    return java


def _archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: str = "jdk") -> ClassArchive:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / home))
    archive = ClassArchive.in_directory(tmp_path / "cache")
    assert archive is not None
    return archive


def test_the_name_follows_the_java_binary_and_pyspark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    java = _java(tmp_path / "jdk")
    _java(tmp_path / "other-jdk")
    first = _archive(tmp_path, monkeypatch)
    assert first == _archive(tmp_path, monkeypatch)
    assert first.path.parent == tmp_path / "cache"
    assert first.path.name.startswith(f"spark-{pyspark.__version__}-")
    assert first != _archive(tmp_path, monkeypatch, "other-jdk")
    os.utime(java, ns=(0, java.stat().st_mtime_ns + 10**9))  # the JDK replaced in place
    replaced = _archive(tmp_path, monkeypatch)
    assert replaced != first
    monkeypatch.setattr(pyspark, "__version__", "9.9.9")
    assert _archive(tmp_path, monkeypatch) != replaced


def test_no_java_no_archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert ClassArchive.in_directory(tmp_path) is None


def test_a_missing_archive_is_written_by_this_process_then_mapped(tmp_path: Path) -> None:
    archive = ClassArchive(tmp_path / "cache" / "spark.jsa")
    assert archive.partial.name == f"spark.jsa.{os.getpid()}.tmp"
    assert archive.java_options() == f"-XX:ArchiveClassesAtExit={archive.partial} {QUIET}"
    assert archive.partial.parent.is_dir()  # made, for the JVM to write into
    archive.partial.write_bytes(b"archive")  # what the JVM leaves as it exits
    assert archive.publish()
    assert archive.path.read_bytes() == b"archive"
    assert not archive.partial.exists()
    assert archive.java_options() == f"-XX:SharedArchiveFile={archive.path} {QUIET}"


def test_nothing_or_an_empty_file_is_not_published(tmp_path: Path) -> None:
    archive = ClassArchive(tmp_path / "spark.jsa")
    assert not archive.publish()
    archive.partial.write_bytes(b"")
    assert not archive.publish()
    assert not archive.path.exists()
    assert not archive.partial.exists()


def test_a_jvm_that_did_not_exit_cleanly_leaves_no_archive_and_no_retry(tmp_path: Path) -> None:
    archive = ClassArchive(tmp_path / "spark.jsa")
    archive.partial.write_bytes(b"half")
    archive.discard()
    assert list(tmp_path.iterdir()) == [archive.failed]
    assert archive.java_options() == ""  # later audits neither write nor wait for it
    archive.failed.unlink()  # removed by hand: the next audit tries again
    assert archive.written_by(archive.java_options())


def test_leftovers_of_stopped_audits_are_removed_not_those_being_written(tmp_path: Path) -> None:
    archive = ClassArchive(tmp_path / "spark.jsa")
    stale, current = tmp_path / "spark.jsa.1.tmp", tmp_path / "spark.jsa.2.tmp"
    for leftover in (stale, current):
        leftover.write_bytes(b"x")
    old = time.time() - STALE_AFTER_S - 60
    os.utime(stale, (old, old))
    archive.java_options()
    assert not stale.exists()
    assert current.exists()


def test_an_unwritable_cache_writes_no_archive(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    assert ClassArchive(tmp_path / "file" / "spark.jsa").java_options() == ""


def test_a_local_master_gets_the_archive_options(tmp_path: Path) -> None:
    archive = ClassArchive(tmp_path / "spark.jsa")
    key = "spark.driver.extraJavaOptions"
    local = session_config("local[2]", ivy_dir=tmp_path, class_archive=archive)[key]
    assert local == f"-XX:+UseParallelGC -XX:ArchiveClassesAtExit={archive.partial} {QUIET}"
    assert key not in session_config("spark://h:7077", ivy_dir=tmp_path, class_archive=archive)


def test_the_jvm_writes_it_only_when_its_options_say_so(tmp_path: Path) -> None:
    archive = ClassArchive(tmp_path / "spark.jsa")
    assert archive.written_by(f"-XX:+UseParallelGC {archive.java_options()}")
    assert not archive.written_by("-XX:+UseParallelGC")  # e.g. the user's own options
    archive.partial.write_bytes(b"archive")
    archive.publish()
    assert not archive.written_by(archive.java_options())  # mapped, not written


@pytest.mark.parametrize("folder", ["my cache", "it's", 'a"b'])
def test_a_path_spark_would_split_gets_no_archive(tmp_path: Path, folder: str) -> None:
    archive = ClassArchive(tmp_path / folder / "spark.jsa")
    assert archive.java_options() == ""
    assert not archive.path.parent.exists()
