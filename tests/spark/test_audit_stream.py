"""Streaming audit: new trace records are picked up on the next trigger, and a restart
from the checkpoint counts nothing twice."""

from __future__ import annotations

from pathlib import Path

import pytest
from audit_seed import NOW_MS, T0, G, Scenario, T, write_events
from pyspark.sql import SparkSession

from rmqcompat.config import ClientConfig
from rmqcompat.spark.audit import AuditPolicy
from rmqcompat.spark.job import AuditJob, run_stream

pytestmark = pytest.mark.integration


def _g(report: dict[str, object] | None) -> dict[str, object]:
    assert report is not None
    (entry,) = [e for e in report["groups"] if e["group"] == G and e["topic"] == T]  # type: ignore[index, union-attr]
    return entry  # type: ignore[no-any-return]


def test_stream_picks_up_new_records_and_restarts_without_double_counting(
    spark: SparkSession, kafka_bootstrap: str, namespace: str, tmp_path: Path
) -> None:
    client = ClientConfig(kafka_bootstrap, namespace)
    job = AuditJob(client, AuditPolicy(now_ms=NOW_MS), lag=False)
    first = Scenario(namespace)
    first.publish("m1")
    first.consume("m1", G)
    first.publish("m2")
    write_events(client, first.events)
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    report = _g(run_stream(spark, job, out, checkpoint))
    assert (report["produced"], report["succeeded_first_time"], report["lost"]) == (2, 1, 1)

    second = Scenario(namespace)
    second.consume("m2", G, at=T0 + 5000)
    second.publish("m3")
    second.consume("m3", G, "RECONSUME_LATER")
    second.consume("m3", G, reconsume=1, at=T0 + 12_000)
    write_events(client, second.events)
    # a new query on the same checkpoint: a restart; it reads only what is new
    report = _g(run_stream(spark, job, out, checkpoint))
    assert (report["produced"], report["succeeded_first_time"], report["lost"]) == (3, 2, 0)
    assert report["retried_histogram"] == {"1": 1}

    report = _g(run_stream(spark, job, out, checkpoint))  # nothing new
    assert (report["produced"], report["succeeded_first_time"]) == (3, 2)
    assert report["duplicate_deliveries"] == 0
    batches = sorted(p.name for p in (out / "events").glob("batch=*"))
    assert batches == ["batch=0", "batch=1"]
