"""Batch audit over a seeded scenario with known truth (audit_seed.py): one figure per test."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from audit_seed import (
    EXPECTED_G,
    EXPECTED_H,
    NOW_MS,
    G,
    H,
    Scenario,
    T,
    seed_topic_offsets,
    write_events,
)
from PIL import Image
from pyspark.sql import SparkSession

from rmqcompat.config import ClientConfig
from rmqcompat.spark.audit import AuditPolicy
from rmqcompat.spark.job import AuditJob, run_batch

pytestmark = pytest.mark.integration
#: Events the seeding sink drops (and counts in the records it writes after).
DROPPED = 3


@pytest.fixture(scope="module")
def audited(
    spark: SparkSession, kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, Any], Path]:
    # unique per session too: a shared broker keeps the trace topics of earlier sessions
    namespace = f"audit{uuid.uuid4().hex[:10]}"
    client = ClientConfig(kafka_bootstrap, namespace)
    events = Scenario(namespace).build().events
    write_events(client, events, garbage=[b"not a trace record"], unencodable=DROPPED)
    seed_topic_offsets(client)
    out = tmp_path_factory.mktemp("audit")
    report = run_batch(spark, AuditJob(client, AuditPolicy(now_ms=NOW_MS)), out)
    return report, out


def _entry(report: dict[str, Any], group: str) -> dict[str, Any]:
    (entry,) = [e for e in report["groups"] if e["group"] == group and e["topic"] == T]
    return entry


def test_one_entry_per_group_and_topic(audited: tuple[dict[str, Any], Path]) -> None:
    report, _ = audited
    assert sorted((e["group"], e["topic"]) for e in report["groups"]) == [(G, T), (H, T)]


@pytest.mark.parametrize("figure", sorted(EXPECTED_G))
def test_group_g_figure(audited: tuple[dict[str, Any], Path], figure: str) -> None:
    assert _entry(audited[0], G)[figure] == EXPECTED_G[figure]


@pytest.mark.parametrize("figure", sorted(EXPECTED_H))
def test_group_h_figure(audited: tuple[dict[str, Any], Path], figure: str) -> None:
    assert _entry(audited[0], H)[figure] == EXPECTED_H[figure]


def test_unreadable_trace_records_are_counted(audited: tuple[dict[str, Any], Path]) -> None:
    assert audited[0]["trace_records_unreadable"] == 1


def test_events_the_clients_dropped_are_counted(audited: tuple[dict[str, Any], Path]) -> None:
    assert audited[0]["trace_events_dropped"] == DROPPED


def test_outputs_written(audited: tuple[dict[str, Any], Path], spark: SparkSession) -> None:
    report, out = audited
    assert json.loads((out / "report.json").read_text()) == report
    outcomes = {
        (row["group"], row["msg_id"]): row["outcome"]
        for row in spark.read.parquet(str(out / "outcomes")).collect()
    }
    assert outcomes[(G, "m7")] == "lost"
    assert outcomes[(G, "m6")] == "parked"
    assert outcomes[(G, "m9")] == "pending"
    assert outcomes[(H, "m1")] == "succeeded"
    for chart in ("retries.png", "lateness.png", "flow.png"):
        with Image.open(out / chart) as image:
            assert image.size[0] >= 600
