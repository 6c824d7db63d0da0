"""Forwarder metrics in Prometheus text format, and an HTTP endpoint with a health check.

Each forwarder owns a private :class:`prometheus_client.CollectorRegistry`, so several
forwarders in one process (tests, embedding apps) never clash. ``GET /metrics`` returns
the text exposition; ``GET /health`` returns 200 while the health callback finds nothing
wrong, else 503 with the reason (not running, no assignment, no broker contact).
"""

from __future__ import annotations

import bisect
import logging
import threading
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from rmqcompat.errors import RmqCompatError
from rmqcompat.trace import TraceStats

log = logging.getLogger(__name__)

_LATENESS_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60, 600)


class ForwarderMetrics:
    """Counters, gauges and the lateness histogram of one forwarder (labelled by level topic)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.forwarded = Counter(
            "rmqcompat_forwarder_forwarded",
            "Records delivered to their real topic",
            ["level"],
            registry=r,
        )
        self.hops = Counter(
            "rmqcompat_forwarder_hops",
            "Timer messages moved on to another level",
            ["level"],
            registry=r,
        )
        self.quarantined = Counter(
            "rmqcompat_forwarder_quarantined",
            "Records set aside in the quarantine topic (unparseable or refused for good)",
            ["level"],
            registry=r,
        )
        self.recalled = Counter(
            "rmqcompat_forwarder_recalled",
            "Parked records dropped because their send was recalled (RocketMQ 5 recall)",
            ["level"],
            registry=r,
        )
        self.undeliverable = Counter(
            "rmqcompat_forwarder_undeliverable",
            "Records the broker refused for good (missing topic, not authorised, too large); "
            "each is quarantined",
            ["level", "code"],
            registry=r,
        )
        self.produce_failures = Counter(
            "rmqcompat_forwarder_produce_failures",
            "Failed produces (retriable ones are retried, the others quarantined)",
            registry=r,
        )
        self.lateness = LatenessHistogram()
        r.register(self.lateness)
        self.parked = Gauge(
            "rmqcompat_forwarder_parked_records",
            "Records on assigned partitions not yet forwarded (lag)",
            ["level"],
            registry=r,
        )
        self.assigned = Gauge(
            "rmqcompat_forwarder_assigned_partitions", "Level partitions owned now", registry=r
        )
        self.paused = Gauge(
            "rmqcompat_forwarder_paused_partitions", "Partitions waiting for a due time", registry=r
        )

    def watch_unserved(self, check: Callable[[], tuple[str, ...]]) -> None:
        """Export the level topics ``check`` finds unserved, asked at each scrape."""
        self.registry.register(UnservedLevelTopics(check))

    def watch_trace(self, stats: Callable[[], TraceStats]) -> None:
        """Export the trace sink's counters, ``stats()`` read at each scrape."""
        self.registry.register(TraceEvents(stats))

    def render(self) -> bytes:
        return generate_latest(self.registry)


class UnservedLevelTopics(Collector):
    """Level topics of the namespace that no member of the forwarder group consumes.

    ``rmqcompat_forwarder_unserved_level_topics`` counts them and
    ``rmqcompat_forwarder_unserved_level_topic{topic=...}`` (1) names them; alert on a
    count above 0 that lasts longer than a rebalance. ``check`` asks the broker (see
    :mod:`rmqcompat.topics.verify_forwarding`) at scrape time, off the poll thread; when
    it fails, neither is exported and the failure is logged.
    """

    def __init__(self, check: Callable[[], tuple[str, ...]]) -> None:
        self._check = check

    def collect(self) -> Iterator[GaugeMetricFamily]:
        try:
            unserved = self._check()
        except RmqCompatError as exc:
            log.warning("could not check for unserved level topics: %s", exc)
            return
        yield GaugeMetricFamily(
            "rmqcompat_forwarder_unserved_level_topics",
            "Level topics of the namespace no member of the forwarder group consumes",
            value=len(unserved),
        )
        named = GaugeMetricFamily(
            "rmqcompat_forwarder_unserved_level_topic",
            "1 for each level topic no member of the forwarder group consumes",
            labels=["topic"],
        )
        for topic in unserved:
            named.add_metric([topic], 1)
        yield named


class TraceEvents(Collector):
    """``rmqcompat_trace_events{outcome=...}``: the forwarder's trace events by what became
    of them (``written``; ``dropped_full``, ``dropped_failed``, ``dropped_unsent``: lost to
    the trace, never to the data path) and ``buffered``, waiting now. Tracing never slows
    forwarding down: a full buffer drops and counts (:mod:`rmqcompat.trace.sink`)."""

    name = "rmqcompat_trace_events"

    def __init__(self, stats: Callable[[], TraceStats]) -> None:
        self._stats = stats

    def collect(self) -> Iterator[GaugeMetricFamily]:
        stats = self._stats()
        family = GaugeMetricFamily(
            self.name, "Trace events by outcome (dropped ones are counted)", labels=["outcome"]
        )
        for outcome in ("written", "dropped_full", "dropped_failed", "dropped_unsent", "buffered"):
            family.add_metric([outcome], getattr(stats, outcome))
        yield family


class LatenessHistogram(Collector):
    """``rmqcompat_forwarder_lateness_seconds``: produce time minus due time of forwarded records.

    Observed for every forwarded record on the poll thread; prometheus_client's Histogram
    costs several locked updates per observation (7% of the forwarder's CPU in a profile),
    this one a bisect per observation and one lock per batch (:meth:`observe_all`, called
    once per drained partition).
    """

    name = "rmqcompat_forwarder_lateness_seconds"

    def __init__(self, buckets: tuple[float, ...] = _LATENESS_BUCKETS) -> None:
        self._bounds = buckets
        self._counts = [0] * (len(buckets) + 1)  # the last one is +Inf
        self._sum = 0.0
        self._lock = threading.Lock()

    def observe_all(self, seconds: Sequence[float]) -> None:
        """Add each of ``seconds`` as one observation."""
        bounds = self._bounds
        indexes = [bisect.bisect_left(bounds, value) for value in seconds]
        total = sum(seconds)
        with self._lock:
            counts = self._counts
            for index in indexes:
                counts[index] += 1
            self._sum += total

    def collect(self) -> Iterator[HistogramMetricFamily]:
        with self._lock:
            counts, total = list(self._counts), self._sum
        bounds = [*(_go_float(b) for b in self._bounds), "+Inf"]
        cumulative = [sum(counts[: i + 1]) for i in range(len(counts))]
        yield HistogramMetricFamily(
            self.name,
            "Produce time minus due time of forwarded records",
            buckets=list(zip(bounds, cumulative, strict=True)),
            sum_value=total,
        )


class Tally:
    """Per-record counts kept as plain ints on the poll thread, added to the Prometheus
    counters by :meth:`flush` (each commit interval): a labelled ``inc`` per record cost
    more than the dict update (another 7% in the profile)."""

    def __init__(self, metrics: ForwarderMetrics) -> None:
        self.metrics = metrics
        self._counts: defaultdict[tuple[str, str], int] = defaultdict(int)

    def add(self, kind: str, label: str) -> None:
        self._counts[kind, label] += 1

    def flush(self) -> None:
        for (kind, label), count in self._counts.items():
            getattr(self.metrics, kind).labels(label).inc(count)
        self._counts.clear()


class MetricsServer:
    """Serves ``/metrics`` and ``/health`` on a daemon thread until :meth:`close`.

    Args:
        metrics: what ``/metrics`` renders.
        healthy: called per ``/health`` request; must be cheap and thread-safe.
        reason: called when ``healthy`` said False, for the 503 body: why (None: unknown).
        host, port: where to listen (port 0 picks a free port; see :attr:`port`).

    Raises:
        OSError: the port cannot be bound.
    """

    def __init__(
        self,
        metrics: ForwarderMetrics,
        healthy: Callable[[], bool],
        host: str,
        port: int,
        reason: Callable[[], str | None] = lambda: None,
    ) -> None:
        handler = _handler(metrics, healthy, reason)
        self._server = ThreadingHTTPServer((host, port), handler)
        self._server.daemon_threads = True
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="rmqcompat-forwarder-metrics", daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


def _handler(
    metrics: ForwarderMetrics, healthy: Callable[[], bool], reason: Callable[[], str | None]
) -> type:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.split("?")[0] == "/metrics":
                self._reply(200, CONTENT_TYPE_LATEST, metrics.render())
            elif self.path.split("?")[0] == "/health":
                if healthy():
                    self._reply(200, "text/plain", b"ok\n")
                else:
                    why = reason() or "unknown reason"
                    self._reply(503, "text/plain", f"unhealthy: {why}\n".encode())
            else:
                self._reply(404, "text/plain", b"not found\n")

        def _reply(self, status: int, content_type: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass  # scrapes every few seconds would flood stderr

    return Handler


def _go_float(value: float) -> str:
    """A bucket bound as the Prometheus text format writes it (the library's own helper is
    untyped)."""
    text: str = floatToGoString(value)  # type: ignore[no-untyped-call]
    return text
