"""The audit on a Spark standalone cluster (a master and two one-core workers on loopback,
:mod:`standalone`) reports what it reports on ``local[2]``: the same ``report.json`` and the
same outcome for every message, from executors that ran on the workers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import audit_seed as seed
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest
from standalone import standalone_cluster

from rmqcompat.config import ClientConfig
from rmqcompat.devbroker.ports import accepts_connections

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(3000)]


def _audit(bootstrap: str, namespace: str, master: str, out: Path) -> dict[str, Any]:
    """``rmqcompat audit --master master`` in a process of its own (one Spark per process),
    its Python workers running this interpreter; its report."""
    argv = [sys.executable, "-m", "rmqcompat.cli.main", "--bootstrap-servers", bootstrap]
    argv += ["--namespace", namespace, "audit", "--out", str(out), "--now", str(seed.NOW_MS)]
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    done = subprocess.run(
        [*argv, "--master", master], env=env, capture_output=True, text=True, timeout=1200
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads((out / "report.json").read_text("utf-8"))
    return report


def _outcomes(out: Path) -> list[dict[str, Any]]:
    """The audit's outcome rows, in one order."""
    rows: list[dict[str, Any]] = pq.read_table(out / "outcomes").to_pylist()
    return sorted(rows, key=lambda row: (row["group"], row["topic"], row["msg_id"]))


def test_a_standalone_cluster_audits_as_local_does(
    kafka_bootstrap: str, broker_kind: str, namespace: str, tmp_path: Path
) -> None:
    if broker_kind == "tansu":  # see tests/spark/conftest.py
        pytest.skip("Spark's kafka source reads too little of Tansu 0.6.0's topics")
    client = ClientConfig(kafka_bootstrap, namespace)
    seed.write_events(client, seed.Scenario(namespace).build().events)
    seed.seed_topic_offsets(client)
    local = _audit(kafka_bootstrap, namespace, "local[2]", tmp_path / "local")
    with standalone_cluster(tmp_path / "cluster") as cluster:
        remote = _audit(kafka_bootstrap, namespace, cluster.master_url, tmp_path / "cluster-out")
        launched = [cluster.executor_logs(work_dir) for work_dir in cluster.work_dirs]
    assert not accepts_connections(int(cluster.master_url.rsplit(":", 1)[1]))  # stopped
    assert all(launched), launched  # both workers ran executors of the audit
    assert remote == local
    assert _outcomes(tmp_path / "cluster-out") == _outcomes(tmp_path / "local")
    entries = {entry["group"]: entry for entry in remote["groups"]}
    for group, expected in ((seed.G, seed.EXPECTED_G), (seed.H, seed.EXPECTED_H)):
        assert {name: entries[group][name] for name in expected} == expected
