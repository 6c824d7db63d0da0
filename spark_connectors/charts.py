"""PNG charts of an audit: retry histogram, forwarder lateness, flow over time."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import matplotlib

from rmqcompat.trace.schema import EVENT_TYPES

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

_MAX_BINS = 120
#: How many bins :func:`flow_bin_ms` aims for at most.
_FLOW_BINS = 60
_DAY_MS = 86_400_000
#: Bin widths a reader takes in at a glance, narrowest first.
_NICE_BINS_MS = (
    *(10, 20, 50, 100, 200, 500),
    *(s * 1000 for s in (1, 2, 5, 10, 15, 30)),
    *(m * 60_000 for m in (1, 2, 5, 10, 15, 30)),
    *(h * 3_600_000 for h in (1, 2, 3, 6, 12)),
    _DAY_MS,
)
#: Up to this many bins the flow chart draws marked points, not steps.
_MARKED_BINS = 3
#: Up to this many distinct lateness values the lateness chart draws stems.
_STEMS = 20
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
    """Forwarder lateness (forwarded at - due at) with p50, p99 and max marked (as the
    report computes them, :func:`lateness_marks`); ``counts``: (lateness in ms, forwards
    with that lateness). Up to :data:`_STEMS` distinct values are drawn one stem each
    (a histogram of one or two values says nothing), more as a histogram."""
    fig, ax = plt.subplots(figsize=(9, 4.5))
    values = [value for value, _ in counts]
    weights = [n for _, n in counts]
    if len(set(values)) > _STEMS:
        ax.hist(values, bins=min(60, len(set(values))), weights=weights, color="tab:blue")
    elif counts:
        ax.stem(values, weights, basefmt=" ")
    if counts:
        for (name, mark), style in zip(
            lateness_marks(counts).items(), ("--", "-.", ":"), strict=True
        ):
            ax.axvline(mark, color="tab:red", linestyle=style, label=f"{name} {mark} ms")
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "no forwarded messages", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("lateness (ms): forwarded at - due at")
    ax.set_ylabel("forwards")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(f"Forwarder lateness ({sum(weights)} forwards)")
    _save(fig, path)


def lateness_marks(counts: Sequence[tuple[int, int]]) -> dict[str, int]:
    """``p50``, ``p99`` and ``max`` of the values counted in ``counts`` ((value, count)
    pairs): the value of rank ``ceil(q * n)`` (1-based), the rule of Spark's
    ``percentile_approx`` where it is exact, so the chart marks what the report says.

    Raises:
        ValueError: ``counts`` counts nothing.
    """
    ordered = sorted(counts)
    total = sum(n for _, n in ordered)
    if total <= 0:
        raise ValueError("no values")
    marks = {}
    for name, q in (("p50", 0.5), ("p99", 0.99), ("max", 1.0)):
        rank, seen = max(1, math.ceil(q * total)), 0
        marks[name] = next(value for value, n in ordered if (seen := seen + n) >= rank)
    return marks


def flow_bin_ms(span_ms: int) -> int:
    """The flow chart's bin width for a run of ``span_ms`` (first to last event): the
    narrowest of :data:`_NICE_BINS_MS` that covers it in at most :data:`_FLOW_BINS` bins
    (a 5 s run: 100 ms; a 5 h run: 5 min), whole days beyond those."""
    target = span_ms / _FLOW_BINS
    for width in _NICE_BINS_MS:
        if width >= target:
            return width
    return _DAY_MS * math.ceil(target / _DAY_MS)


def _bins(flow: Sequence[tuple[int, str, int]], bucket_ms: int) -> tuple[int, int, int]:
    """(start, width, count) of at most ``_MAX_BINS`` bins covering every bucket."""
    start = min(bucket for bucket, _, _ in flow)
    span = max(bucket for bucket, _, _ in flow) - start + bucket_ms
    width = bucket_ms * max(1, -(-span // (bucket_ms * _MAX_BINS)))
    return start, width, -(-span // width)


def flow_chart(flow: Sequence[tuple[int, str, int]], bucket_ms: int, path: Path) -> None:
    """Writes :func:`flow_figure` to ``path``."""
    _save(flow_figure(flow, bucket_ms), path)


def flow_figure(flow: Sequence[tuple[int, str, int]], bucket_ms: int) -> Figure:
    """Events per time bin, one line per event type (``flow``: bucket start in ms, event
    type, count; ``bucket_ms``: the buckets' width, e.g. :func:`flow_bin_ms`); empty bins
    count 0, at most 120 bins. Up to :data:`_MARKED_BINS` bins are drawn as marked
    points at the bins' middles (a step line of one bin is invisible), more as steps."""
    fig, ax = plt.subplots(figsize=(9, 4.5))
    if flow:
        start, width, count = _bins(flow, bucket_ms)
        minutes = count * width > 20 * 60_000
        unit, scale = ("minutes", 60_000) if minutes else ("seconds", 1000)
        edges = [i * width / scale for i in range(count + 1)]
        for event in _FLOW_EVENTS:
            counts = [0] * count
            for bucket, kind, events in flow:
                if kind == event:
                    counts[(bucket - start) // width] += events
            if not any(counts):
                continue
            if count <= _MARKED_BINS:
                middles = [(left + right) / 2 for left, right in itertools.pairwise(edges)]
                ax.plot(middles, counts, marker="o", label=event.lower())
            else:  # the last bin's level drawn to its right edge
                ax.step(edges, [*counts, counts[-1]], where="post", label=event.lower())
        ax.set_xlim(0, edges[-1])
        ax.set_ylim(bottom=0)
        ax.set_xlabel(f"{unit} since {_utc(start)} ({width / 1000:g} s bins)")
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "no events", ha="center", va="center", transform=ax.transAxes)
    ax.set_ylabel("events per bin")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title("Flow over time")
    return fig


def _utc(epoch_ms: int) -> str:
    return datetime.fromtimestamp(epoch_ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _save(fig: Figure, path: Path) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
