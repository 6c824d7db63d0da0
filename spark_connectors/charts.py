"""PNG charts of an audit: retry histogram, forwarder lateness, flow over time."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import matplotlib

from rmqcompat.trace.schema import EVENT_TYPES

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator

_MAX_BINS = 120
_FLOW_EVENTS = EVENT_TYPES  # one line per event type, in the schema's order


def _label(entry: Mapping[str, Any]) -> str:
    return f"{entry['group']} / {entry['topic']}"


def retry_chart(report: Mapping[str, Any], path: Path) -> None:
    """Bars per group and topic: messages that succeeded after 0, 1, 2 ... retries."""
    groups = [entry for entry in report["groups"] if entry["group"]]
    fig, ax = plt.subplots(figsize=(9, 4.5))
    retries = sorted({0, *(int(n) for entry in groups for n in entry["retried_histogram"])})
    width = 0.8 / max(len(groups), 1)
    for i, entry in enumerate(groups):
        counts = [
            entry["succeeded_first_time"] if n == 0 else entry["retried_histogram"].get(str(n), 0)
            for n in retries
        ]
        bars = ax.bar([n + i * width for n in retries], counts, width, label=_label(entry))
        ax.bar_label(bars, [str(c) if c else "" for c in counts], fontsize=8)
    ax.set_xticks([n + width * (len(groups) - 1) / 2 for n in retries], [str(n) for n in retries])
    ax.set_xlabel("retries before success (0 = first delivery)")
    ax.set_ylabel("messages")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title("Messages by retries before success")
    if groups:
        ax.legend(fontsize=8)
    _save(fig, path)


def lateness_chart(counts: Sequence[tuple[int, int]], path: Path) -> None:
    """Histogram of forwarder lateness (delivery - due time) with p50, p99 and max marked;
    ``counts``: (lateness in ms, forwards with that lateness)."""
    fig, ax = plt.subplots(figsize=(9, 4.5))
    values = [value for value, _ in counts]
    forwards = sum(n for _, n in counts)
    if counts:
        weights = [n for _, n in counts]
        ax.hist(values, bins=min(60, max(10, len(set(values)))), weights=weights, color="tab:blue")
        for name, style in (("p50", "--"), ("p99", "-."), ("max", ":")):
            mark = _quantile(counts, name)
            ax.axvline(mark, color="tab:red", linestyle=style, label=f"{name} {mark} ms")
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "no forwarded messages", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("lateness (ms): forwarded at - due at")
    ax.set_ylabel("forwards")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(f"Forwarder lateness ({forwards} forwards)")
    _save(fig, path)


def _quantile(counts: Sequence[tuple[int, int]], name: str) -> int:
    """``p50``, ``p99`` or ``max`` of the values counted in ``counts`` (nearest rank)."""
    ordered = sorted(counts)
    total = sum(n for _, n in ordered)
    rank = total - 1 if name == "max" else min(total - 1, int(float(name[1:]) / 100 * total))
    seen = 0
    for value, n in ordered:
        seen += n
        if seen > rank:
            return value
    raise ValueError("no values")


def _bins(flow: Sequence[tuple[int, str, int]], bucket_ms: int) -> tuple[int, int, int]:
    """(start, width, count) of at most ``_MAX_BINS`` bins covering every bucket."""
    start = min(bucket for bucket, _, _ in flow)
    span = max(bucket for bucket, _, _ in flow) - start + bucket_ms
    width = bucket_ms * max(1, -(-span // (bucket_ms * _MAX_BINS)))
    return start, width, -(-span // width)


def flow_chart(flow: Sequence[tuple[int, str, int]], bucket_ms: int, path: Path) -> None:
    """Events per time bin, one step line per event type (``flow``: bucket start in ms,
    event type, count); empty bins count 0, at most 120 bins."""
    fig, ax = plt.subplots(figsize=(9, 4.5))
    if flow:
        start, width, count = _bins(flow, bucket_ms)
        minutes = count * width > 20 * 60_000
        unit, scale = ("minutes", 60_000) if minutes else ("seconds", 1000)
        xs = [i * width / scale for i in range(count)]
        for event in _FLOW_EVENTS:
            counts = [0] * count
            for bucket, kind, events in flow:
                if kind == event:
                    counts[(bucket - start) // width] += events
            if any(counts):
                ax.step(xs, counts, where="post", label=event.lower())
        ax.set_xlabel(f"{unit} since {_utc(start)} ({width / 1000:g} s bins)")
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "no events", ha="center", va="center", transform=ax.transAxes)
    ax.set_ylabel("events per bin")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title("Flow over time")
    _save(fig, path)


def _utc(epoch_ms: int) -> str:
    return datetime.fromtimestamp(epoch_ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _save(fig: Any, path: Path) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
