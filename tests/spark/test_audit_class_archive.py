"""``rmqcompat audit`` as a user runs it, twice in a new cache: the first writes the class
archive as its JVM exits and publishes it, the second's JVM maps Spark's classes from it;
both report the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from audit_seed import NOW_MS, Scenario, write_events
from pyspark.sql import SparkSession

from rmqcompat.cache import CACHE_DIR_ENV, cache_root
from rmqcompat.config import ClientConfig

#: How the JVM's class-loading log names a class mapped from a dynamic archive.
_MAPPED = "source: shared objects file (top)"


def _audit(bootstrap: str, namespace: str, cache: Path, out: Path, logs: Path) -> str:
    """Runs the command in a new process; returns its standard error."""
    env = {
        **os.environ,
        CACHE_DIR_ENV: str(cache),
        # read by every `java` launcher: the class-loading log of the audit's JVM
        "JDK_JAVA_OPTIONS": f"-Xlog:class+load=info:file={logs}/load-%p.txt",
    }
    command = [sys.executable, "-m", "rmqcompat.cli.main", "--bootstrap-servers", bootstrap]
    command += ["--namespace", namespace, "audit", "--master", "local[2]", "--out", str(out)]
    command += ["--now", str(NOW_MS), "--jars-dir", str(cache_root() / "ivy" / "jars")]
    done = subprocess.run(command, env=env, cwd=out.parent, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stderr


def _mapped_classes(logs: Path) -> list[str]:
    return [
        line
        for log in logs.glob("load-*.txt")
        for line in log.read_text().splitlines()
        if _MAPPED in line and " org.apache.spark." in line
    ]


@pytest.mark.integration
@pytest.mark.slow
def test_the_first_audit_writes_the_class_archive_the_next_maps_it(
    spark: SparkSession, kafka_bootstrap: str, namespace: str, tmp_path: Path
) -> None:
    # `spark` resolved the connector into the shared cache: its jars are given here
    write_events(ClientConfig(kafka_bootstrap, namespace), Scenario(namespace).build().events)
    cache, reports = tmp_path / "cache", []
    for run in ("first", "second"):
        logs, out = tmp_path / run / "logs", tmp_path / run / "out"
        logs.mkdir(parents=True)
        stderr = _audit(kafka_bootstrap, namespace, cache, out, logs)
        reports.append(json.loads((out / "report.json").read_text())["groups"])
        archives = sorted(path.name for path in (cache / "spark-classes").iterdir())
        assert len(archives) == 1 and archives[0].endswith(".jsa")  # published, no leftover
        if run == "first":
            assert "saving Spark's classes" in stderr
            assert _mapped_classes(logs) == []
        else:
            assert "saving Spark's classes" not in stderr
            assert len(_mapped_classes(logs)) > 1000
    assert reports[0] == reports[1]
