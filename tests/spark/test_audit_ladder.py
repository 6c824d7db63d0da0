"""The ladder and forwarder lateness judged against the due times the trace recorded
(issue 22): clients with a short delay table, a paused forwarder, and send-backs traced
without a due time by older clients.

Seeded truth, with the clients' table ``50ms 75ms 100ms 135ms`` (level 3 = 100 ms, level
4 and beyond = 135 ms), which the audit is not told:

- group ``S``: s1 succeeds first time; s2 fails once, s3 twice; forwarded 3, 7 and 4 ms
  after their due times and delivered 1-3 ms later: every retry on time;
- group ``P``: the same flow behind a paused forwarder, forwarding 2000, 2010 and 2030 ms
  after the due times: lateness p50/p99/max 2010/2030/2030, every forward late and, with
  ``late_ms`` 1 s, every retry a violation;
- group ``O``: o1 and o2 sent back without a due time (older clients), judged by the
  audit's table (RocketMQ's: level 3 = 10 s): o1 delivered after 10.2 s (on time), o2
  after 2 s (early); o3 and o4 with recorded due times: o3 on time, o4 delivered 3 s
  before its due time (early).
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from audit_seed import NOW_MS, T0, Scenario, T, received, write_events
from pyspark.sql import SparkSession

from rmqcompat.config import ClientConfig
from rmqcompat.spark.audit import AuditPolicy
from rmqcompat.spark.job import AuditJob, run_batch

pytestmark = pytest.mark.integration
#: The clients' delays for the first and the later retries (levels 3 and 4).
FIRST, LATER = 100, 135
START = T0 + 100
POLICY = AuditPolicy(now_ms=NOW_MS, late_ms=1_000)  # forward_late_ms: 1 s, the default


def _failing_twice(seed: Scenario, group: str, lates: tuple[int, int, int]) -> None:
    """``<g>2`` fails once and ``<g>3`` twice, their forwards ``lates`` ms after due (in
    order: ``<g>2``, then ``<g>3``'s two), each delivered a few ms after its forward."""
    two, three = f"{group.lower()}2", f"{group.lower()}3"
    seed.retry(two, group, 0, START, FIRST + lates[0], lates[0])
    seed.consume(two, group, reconsume=1, at=START + FIRST + lates[0] + 2)
    seed.retry(three, group, 0, START, FIRST + lates[1], lates[1])
    second = START + FIRST + lates[1] + 3  # the next delivery fails again
    seed.retry(three, group, 1, second, LATER + lates[2], lates[2])
    seed.consume(three, group, reconsume=2, at=second + LATER + lates[2] + 1)


def _sent_back(seed: Scenario, msg_id: str, due_ms: int | None, delivered: int) -> None:
    """Group ``O``'s ``msg_id`` fails at ``START`` and is sent back (due ``due_ms``, or no
    due time, as older clients traced it), then delivered ``delivered`` ms later."""
    seed.consume(msg_id, "O", "RECONSUME_LATER", at=START)
    event = seed.at(START).emitter.send_back(received(msg_id), "O", 3, due_ms or 0, "%SCHEDULE%x")
    event["due_ms"] = due_ms
    seed.add(event)
    seed.consume(msg_id, "O", reconsume=1, at=START + delivered)


def _scenario(namespace: str) -> Scenario:
    seed = Scenario(namespace)
    for msg_id in ("s1", "s2", "s3", "p2", "p3", "o1", "o2", "o3", "o4"):
        seed.publish(msg_id)
    seed.consume("s1", "S")
    _failing_twice(seed, "S", (3, 7, 4))
    _failing_twice(seed, "P", (2000, 2010, 2030))
    _sent_back(seed, "o1", None, 10_200)
    _sent_back(seed, "o2", None, 2_000)
    _sent_back(seed, "o3", START + FIRST, FIRST + 5)
    _sent_back(seed, "o4", START + 5_000, 2_000)
    return seed


@pytest.fixture(scope="module")
def report(
    spark: SparkSession, kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    namespace = f"ladder{uuid.uuid4().hex[:10]}"
    client = ClientConfig(kafka_bootstrap, namespace)
    write_events(client, _scenario(namespace).events)
    out = tmp_path_factory.mktemp("ladder")
    return run_batch(spark, AuditJob(client, POLICY, lag=False), out)


def _entry(report: dict[str, Any], group: str) -> dict[str, Any]:
    (entry,) = [e for e in report["groups"] if e["group"] == group and e["topic"] == T]
    return entry


#: Per group: retries judged and violations, forwards and late ones, lateness p50/p99/max.
TRUTH = {
    # on time by the clients' short table, which the audit is not told
    "S": (3, 0, 3, 0, {"p50": 4, "p99": 7, "max": 7}),
    # a paused forwarder: flagged, with its exact lateness
    "P": (3, 3, 3, 3, {"p50": 2010, "p99": 2030, "max": 2030}),
}


@pytest.mark.parametrize("group", sorted(TRUTH))
def test_ladder_and_lateness_are_judged_against_recorded_due_times(
    report: dict[str, Any], group: str
) -> None:
    entry = _entry(report, group)
    names = ("retries_judged", "ladder_violations", "forwards", "late_forwards", "lateness_ms")
    assert tuple(entry[name] for name in names) == TRUTH[group]


def test_send_backs_without_due_time_are_judged_by_the_table(report: dict[str, Any]) -> None:
    entry = _entry(report, "O")
    # o2 early by the table (2 s of 10 s), o4 early by its recorded due time
    assert (entry["retries_judged"], entry["ladder_violations"]) == (4, 2)


def test_the_report_states_its_thresholds_and_bins(report: dict[str, Any]) -> None:
    # the run spans 10.3 s (o1's delivery): 200 ms bins, about 50 of them
    assert {name: report[name] for name in ("late_ms", "forward_late_ms", "flow_bin_ms")} == {
        "late_ms": 1_000,
        "forward_late_ms": 1_000,
        "flow_bin_ms": 200,
    }
