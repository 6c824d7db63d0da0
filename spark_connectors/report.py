"""The audit's figures collected into ``report.json`` and printed as a table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.sql import DataFrame

_COUNTS = (
    "produced",
    "succeeded_first_time",
    "dead_lettered",
    "discarded",
    "replayed",
    "parked",
    "lost",
    "duplicate_deliveries",
    "filtered",
    "pending",
)


def _by_key(frame: DataFrame) -> dict[tuple[str | None, str | None], dict[str, Any]]:
    return {(row["group"], row["topic"]): row.asDict() for row in frame.collect()}


def build_report(
    figures: DataFrame,
    histogram: DataFrame,
    lateness: DataFrame,
    violations: DataFrame,
    lag: Mapping[tuple[str, str], int],
    meta: Mapping[str, Any],
) -> dict[str, Any]:
    """The ``report.json`` object: ``meta`` fields plus ``groups``, one entry per group
    and topic (the frames come from :mod:`rmqcompat.spark.audit`)."""
    late = _by_key(lateness)
    ladder = _by_key(violations)
    retried: dict[tuple[str | None, str | None], dict[str, int]] = {}
    for bar in histogram.collect():
        retried.setdefault((bar["group"], bar["topic"]), {})[str(bar["retries"])] = bar["messages"]
    groups = []
    for key, row in sorted(
        _by_key(figures).items(), key=lambda item: (str(item[0][0]), str(item[0][1]))
    ):
        entry: dict[str, Any] = {"group": key[0], "topic": key[1]}
        entry.update({name: int(row[name] or 0) for name in _COUNTS})
        entry["retried_histogram"] = dict(
            sorted(retried.get(key, {}).items(), key=lambda kv: int(kv[0]))
        )
        timing = late.get(key, {})
        entry["lateness_ms"] = {name: timing.get(name) for name in ("p50", "p99", "max")}
        entry["forwards"] = timing.get("forwards", 0)
        judged = ladder.get(key, {})
        entry["ladder_violations"] = judged.get("ladder_violations", 0)
        entry["retries_judged"] = judged.get("retries_judged", 0)
        entry["lag"] = lag.get((key[0], key[1])) if key[0] and key[1] else None
        groups.append(entry)
    return {**meta, "groups": groups}


_COLUMNS = (
    ("group", "group"),
    ("topic", "topic"),
    ("produced", "produced"),
    ("first_ok", "succeeded_first_time"),
    ("retried", "retried_histogram"),
    ("dlq", "dead_lettered"),
    ("discard", "discarded"),
    ("replay", "replayed"),
    ("parked", "parked"),
    ("lost", "lost"),
    ("dup", "duplicate_deliveries"),
    ("filter", "filtered"),
    ("late p50/p99/max", "lateness_ms"),
    ("ladder", "ladder_violations"),
    ("lag", "lag"),
)


def _cell(value: Any) -> str:
    if isinstance(value, dict) and set(value) == {"p50", "p99", "max"}:
        return "/".join(
            "-" if value[name] is None else str(value[name]) for name in ("p50", "p99", "max")
        )
    if isinstance(value, dict):
        return " ".join(f"{k}:{v}" for k, v in value.items()) or "-"
    return "-" if value is None else str(value)


def format_table(report: Mapping[str, Any]) -> str:
    """The report's groups as a fixed-width text table, one line per group and topic."""
    rows = [[title for title, _ in _COLUMNS]]
    rows += [[_cell(entry[name]) for _, name in _COLUMNS] for entry in report["groups"]]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_COLUMNS))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )
