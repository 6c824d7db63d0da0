"""The Prometheus text exposition of the forwarder's metrics."""

from prometheus_client.parser import text_string_to_metric_families

from rmqcompat.forwarder import DelayForwarder
from rmqcompat.forwarder.metrics import ForwarderMetrics
from rmqcompat.trace import TraceStats


def _samples(metrics: ForwarderMetrics) -> dict[tuple[str, tuple], float]:
    text = metrics.render().decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_counters_gauges_and_lateness_appear_in_the_text() -> None:
    metrics = ForwarderMetrics()
    metrics.forwarded.labels("1s").inc(3)
    metrics.hops.labels("10s").inc()
    metrics.quarantined.labels("1s").inc(2)
    metrics.produce_failures.inc()
    metrics.parked.labels("1s").set(7)
    metrics.lateness.observe_all([0.004, 0.2])
    samples = _samples(metrics)
    assert samples[("rmqcompat_forwarder_forwarded_total", (("level", "1s"),))] == 3
    assert samples[("rmqcompat_forwarder_hops_total", (("level", "10s"),))] == 1
    assert samples[("rmqcompat_forwarder_quarantined_total", (("level", "1s"),))] == 2
    assert samples[("rmqcompat_forwarder_produce_failures_total", ())] == 1
    assert samples[("rmqcompat_forwarder_parked_records", (("level", "1s"),))] == 7
    assert samples[("rmqcompat_forwarder_lateness_seconds_count", ())] == 2
    assert samples[("rmqcompat_forwarder_lateness_seconds_bucket", (("le", "0.005"),))] == 1
    assert samples[("rmqcompat_forwarder_lateness_seconds_bucket", (("le", "0.25"),))] == 2
    assert abs(samples[("rmqcompat_forwarder_lateness_seconds_sum", ())] - 0.204) < 1e-9


def test_two_forwarders_in_one_process_keep_separate_counts() -> None:
    first, second = ForwarderMetrics(), ForwarderMetrics()
    first.produce_failures.inc()
    assert _samples(second)[("rmqcompat_forwarder_produce_failures_total", ())] == 0


def test_health_endpoint_follows_the_callback_and_metrics_are_served() -> None:
    import urllib.error
    import urllib.request

    from rmqcompat.forwarder.metrics import MetricsServer

    state = {"ok": False}
    server = MetricsServer(ForwarderMetrics(), lambda: state["ok"], "127.0.0.1", 0)
    base = f"http://127.0.0.1:{server.port}"
    try:
        try:
            urllib.request.urlopen(f"{base}/health")
            raise AssertionError("expected 503")
        except urllib.error.HTTPError as exc:
            assert exc.code == 503
        state["ok"] = True
        with urllib.request.urlopen(f"{base}/health") as reply:
            assert reply.status == 200
        with urllib.request.urlopen(f"{base}/metrics") as reply:
            assert b"rmqcompat_forwarder_produce_failures_total" in reply.read()
    finally:
        server.close()


def test_trace_events_are_exported_by_outcome_as_the_sink_counts_them() -> None:
    metrics = ForwarderMetrics()
    counts = TraceStats(written=7, dropped_full=3, dropped_failed=2, dropped_unsent=1, buffered=5)
    metrics.watch_trace(lambda: counts)
    sample = metrics.registry.get_sample_value
    exported = {
        outcome: sample("rmqcompat_trace_events", {"outcome": outcome})
        for outcome in ("written", "dropped_full", "dropped_failed", "dropped_unsent", "buffered")
    }
    assert exported == {
        "written": 7,
        "dropped_full": 3,
        "dropped_failed": 2,
        "dropped_unsent": 1,
        "buffered": 5,
    }


def test_a_forwarder_exports_its_own_trace_sinks_counters() -> None:
    forwarder = DelayForwarder("127.0.0.1:1", trace_enabled=True)
    forwarder.tracer.emit(forwarder.tracer.events.quarantine("ns.T", 0, 1, "poison"))
    text = forwarder.metrics.render().decode()
    assert 'rmqcompat_trace_events{outcome="buffered"} 1.0' in text  # never started: waits
