"""The audit's figures collected into ``report.json`` and printed as a table."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rmqcompat.spark.audit import FIGURES


def build_report(
    rows: Iterable[Mapping[str, Any]],
    lag: Mapping[tuple[str, str], int],
    meta: Mapping[str, Any],
) -> dict[str, Any]:
    """The ``report.json`` object: ``meta`` fields plus ``groups``, one entry per group
    and topic, from the rows :func:`rmqcompat.spark.job.run` collects (group figures and
    lateness)."""
    groups = []
    for row in sorted(rows, key=lambda row: (str(row["group"]), str(row["topic"]))):
        key = (row["group"], row["topic"])
        entry: dict[str, Any] = {"group": key[0], "topic": key[1]}
        entry.update({name: int(row[name] or 0) for name in FIGURES})
        entry["retried_histogram"] = {
            str(retries): messages for retries, messages in sorted((row["retried"] or {}).items())
        }
        entry["lateness_ms"] = {name: row[name] for name in ("p50", "p99", "max")}
        entry["forwards"] = row["forwards"] or 0
        entry["late_forwards"] = row["late_forwards"] or 0
        entry["ladder_violations"] = row["ladder_violations"] or 0
        entry["retries_judged"] = row["retries_judged"] or 0
        entry["lag"] = lag.get(key) if key[0] and key[1] else None
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
    ("late_fwd", "late_forwards"),
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
