"""The Spark audit as a second checker of the cluster fault scenario (``ladder_scenario``):
it audits the run's trace topic and holds its figures against the history the consumers
logged and the DLQ.

One local Spark session (``local[2]``) serves every audit of a test module: it is started
by the first audit and stopped by :meth:`TraceAuditor.stop` (``tests/faults/conftest.py``
calls it once the module is done).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
from ladder_scenario import GROUP, MESSAGES, TOPIC, History
from pyspark.sql import SparkSession

from rmqcompat.cache import cache_root
from rmqcompat.config import ClientConfig
from rmqcompat.spark.audit import AuditPolicy
from rmqcompat.spark.job import AuditJob, run_batch
from rmqcompat.spark.session import build_session, stop_session


@dataclass(frozen=True)
class AuditFigures:
    """The audit of the scenario's group and topic (the report's figures, and two of the
    outcomes of the messages the scenario produced).

    Attributes:
        produced: messages with a ``PUBLISH`` event.
        lost: produced messages that never succeeded and are neither dead-lettered,
            discarded, filtered nor parked (judged with no grace: every process has stopped).
        duplicate_deliveries: deliveries beyond one per message and reconsume count.
        dead_lettered: messages that were dead-lettered and never succeeded (a replay sends
            a dead letter again as a new message, with a new msg id).
        replayed: messages with a ``REPLAY`` event (the dead letters replayed).
        produced_deliveries: deliveries (``CONSUME`` events) of the produced messages.
        produced_duplicates: ``duplicate_deliveries`` of the produced messages alone (not
            of their replays).
    """

    produced: int
    lost: int
    duplicate_deliveries: int
    dead_lettered: int
    replayed: int
    produced_deliveries: int
    produced_duplicates: int


#: The figures of :class:`AuditFigures` that the report gives as they are.
_REPORTED = ("produced", "lost", "duplicate_deliveries", "dead_lettered", "replayed")


class TraceAuditor:
    """Audits namespaces' trace topics in one Spark session, started on first use."""

    def __init__(self) -> None:
        self._spark: SparkSession | None = None

    def figures(self, bootstrap: str, namespace: str, out: Path) -> AuditFigures:
        """Audit ``namespace``'s trace topic into ``out``: the figures of the scenario's
        group and topic, as of now (no grace period)."""
        if self._spark is None:
            self._spark = build_session(
                "rmqcompat-fault-audit",
                "local[2]",
                ivy_dir=cache_root() / "ivy",
                extra={"spark.sql.shuffle.partitions": "2"},
            )
            self._spark.sparkContext.setLogLevel("ERROR")
        policy = AuditPolicy(now_ms=int(time.time() * 1000), grace_ms=0)
        job = AuditJob(
            ClientConfig(bootstrap, namespace), policy, group=GROUP, topic=TOPIC, lag=False
        )
        report = run_batch(self._spark, job, out)
        (entry,) = [e for e in report["groups"] if (e["group"], e["topic"]) == (GROUP, TOPIC)]
        columns = ["produced", "deliveries", "duplicate_deliveries"]
        outcomes = pq.read_table(out / "outcomes", columns=columns)
        produced = outcomes.filter(pc.field("produced"))
        return AuditFigures(
            **{name: entry[name] for name in _REPORTED},
            produced_deliveries=_total(produced["deliveries"]),
            produced_duplicates=_total(produced["duplicate_deliveries"]),
        )

    def stop(self) -> None:
        """Stop the session (and its JVM), if one was started."""
        if self._spark is not None:
            stop_session(self._spark)
            self._spark = None


#: The auditor of the running test module.
AUDITOR = TraceAuditor()


def logged_deliveries(history: History) -> tuple[int, int]:
    """(deliveries, repeated deliveries) of the produced messages in the consumers' logs
    (their replays' lines left out): one line per delivery to the listener, and those
    beyond one per message and reconsume count (the audit's duplicate, on the logs)."""
    deliveries = distinct = 0
    for seen in history.outcomes.values():
        first_trip = [times for times, outcome in seen if not outcome.endswith("replayed")]
        deliveries += len(first_trip)
        distinct += len(set(first_trip))
    return deliveries, deliveries - distinct


def check_trace(
    bootstrap: str, namespace: str, history: History, out: Path, untraceable: int = 0
) -> AuditFigures:
    """Audit the run (every consumer, forwarder and the replay stopped: their buffered
    trace events written) and check the audit against ``history`` (the replay done).

    What is asserted, and why:

    - ``produced == MESSAGES`` and ``len(history.lost()) == 0``: the audit judged every
      message, and the logs show none lost; the audit's ``lost`` is 0 as well, or at most
      ``untraceable``: the messages whose every success a SIGKILLed consumer logged. Its
      trace events may have died in its buffer after it committed those offsets, so no
      one consumed them again (a CI run, 2026-11-26: 133 such messages of fault 4).
    - ``dead_lettered == replayed == len(set(history.dead_letters))``, the distinct dead
      letters of the DLQ: a replayed dead letter comes back as a new message (new msg
      id, reconsume count 0), so the message that died stays dead-lettered in the audit;
      the replay traces one ``REPLAY`` per dead letter it sent again, under the dead
      letter's msg id.
    - The duplicates, of the produced messages (their replays are other messages to the
      audit, but the same number in the logs): a consumer logs (and fsyncs) a delivery
      before its listener returns and traces it after, so the trace holds at most the
      logged deliveries of each message and reconsume count. Hence
      ``produced_deliveries`` <= the logged ones and ``produced_duplicates`` <= the logged
      deliveries beyond one per message and reconsume count (:func:`logged_deliveries`:
      failed deliveries repeated by a rebalance or a restart count too, where
      ``history.duplicates()`` counts successes only). The trace holds fewer when a
      batch's partition was revoked while its listener ran (its outcome is not settled
      nor traced: the partition's new owner consumes it again; 372 of 32,284 deliveries
      in a fault-free run with rebalances), when a process dies with events in its
      buffer (SIGKILL) or when the broker refuses a trace record; when it holds as many
      deliveries as the logs, it holds each one, and the duplicates are equal.
    """
    started = time.monotonic()
    figures = AUDITOR.figures(bootstrap, namespace, out)
    took = time.monotonic() - started
    logged, repeated = logged_deliveries(history)
    dead = len(set(history.dead_letters))
    print(
        f"audit ({took:.0f} s): {figures}; logs: {logged} deliveries, {repeated} repeated, "
        f"{history.duplicates()} duplicate successes, {dead} distinct dead letters, "
        f"{len(history.lost())} lost, {untraceable} succeeded only in SIGKILLed consumers"
    )
    assert (figures.produced, len(history.lost())) == (MESSAGES, 0)
    assert figures.lost <= untraceable
    assert figures.dead_lettered == figures.replayed == dead
    assert figures.produced_deliveries <= logged
    assert figures.produced_duplicates <= repeated
    if figures.produced_deliveries == logged:
        assert figures.produced_duplicates == repeated
    return figures


def _total(column: pa.ChunkedArray) -> int:
    return int(pc.sum(column).as_py() or 0)
