"""Running an audit: read the trace topic, compute the figures, write the outputs.

Batch: one read of the trace topic between two offsets. Stream: Spark's ``kafka``
stream source with a checkpoint; each micro-batch of decoded events is written under
``<out>/events/batch=<id>`` (overwritten if Spark runs that batch again after a restart,
so nothing is counted twice) and the report is recomputed over all stored events.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from rmqcompat.config import ClientConfig
from rmqcompat.spark import audit, charts, timing
from rmqcompat.spark.decode import decode_traces
from rmqcompat.spark.lag import consumer_lag
from rmqcompat.spark.reader import kafka_reader
from rmqcompat.spark.report import build_report
from rmqcompat.topics.naming import TRACE_TOPIC
from rmqcompat.trace.schema import FINGERPRINT


@dataclass(frozen=True)
class AuditJob:
    """One audit's settings.

    Args:
        client: bootstrap servers, namespace and librdkafka settings (for the lag query).
        policy: what outcomes and intervals are judged against.
        spark_kafka: Kafka (Java client) settings for Spark's source, e.g. SASL.
        group / topic: report only this group / logical topic (None: all).
        since_ms / until_ms: only events in ``[since_ms, until_ms)`` (None: unbounded).
        flow_bucket_ms: width of the flow chart's time buckets (None: chosen from the
            run's length, :func:`rmqcompat.spark.charts.flow_bin_ms`).
        min_partitions: Spark tasks reading (and decoding) the trace topic, which has
            one partition (None: Spark's default parallelism, every core decodes).
        lag: query committed offsets for the ``lag`` figure.
    """

    client: ClientConfig
    policy: audit.AuditPolicy
    spark_kafka: Mapping[str, str] = field(default_factory=dict)
    group: str | None = None
    topic: str | None = None
    since_ms: int | None = None
    until_ms: int | None = None
    flow_bucket_ms: int | None = None
    min_partitions: int | None = None
    lag: bool = True


def trace_rows(spark: SparkSession, job: AuditJob, *, stream: bool = False) -> DataFrame:
    """Spark's ``kafka`` rows of the namespace's trace topic, read from the earliest."""
    return kafka_reader(
        spark,
        job.client.bootstrap_servers,
        [TRACE_TOPIC],
        job.client.namespace,
        stream=stream,
        kafka=job.spark_kafka,
        min_partitions=job.min_partitions or spark.sparkContext.defaultParallelism,
    ).load()


def _window(events: DataFrame, job: AuditJob) -> DataFrame:
    if job.since_ms is not None:
        events = events.where(F.col("timestamp_ms") >= job.since_ms)
    if job.until_ms is not None:
        events = events.where(F.col("timestamp_ms") < job.until_ms)
    return events


def _select(frame: DataFrame, job: AuditJob) -> DataFrame:
    if job.group is not None:
        frame = frame.where(F.col("group") == job.group)
    if job.topic is not None:
        frame = frame.where(F.col("topic") == job.topic)
    return frame


def run(events: DataFrame, job: AuditJob, out: Path) -> dict[str, Any]:
    """Audit decoded ``events`` and write ``report.json``, ``outcomes/`` (Parquet, one row
    per message and group) and the PNG charts into ``out``; return the report.

    Spark work: the events are decoded once (cached by the first query, which counts
    the unreadable ones and measures the run, for the flow chart's bins); then one query
    writes the outcomes (one shuffle, by msg_id), one collects the report's rows (from
    the written outcomes) and one collects the charts' small aggregates."""
    out.mkdir(parents=True, exist_ok=True)
    decoded = _window(events, job).cache()  # decoding is the expensive part: once
    try:
        unreadable, span_ms = _first_pass(decoded, job)
        bucket_ms = job.flow_bucket_ms or charts.flow_bin_ms(span_ms)
        meta = {"trace_records_unreadable": unreadable, "trace_events_dropped": _dropped(decoded)}
        return _run(audit.normalize(decoded), meta, bucket_ms, job, out)
    finally:
        decoded.unpersist()


def _flow(job: AuditJob) -> Column:
    """The events the flow chart counts: the logical topic's with ``job.topic``, else all."""
    return F.lit(True) if job.topic is None else F.col("topic") == job.topic


def _first_pass(decoded: DataFrame, job: AuditJob) -> tuple[int, int]:
    """(unreadable records, ms from the first to the last event of the flow chart)."""
    readable = F.col("trace_error").isNull()
    at = F.when(readable & _flow(job), F.col("timestamp_ms"))
    row = decoded.agg(
        F.count(F.when(~readable, 1)).alias("unreadable"),
        (F.max(at) - F.min(at)).alias("span_ms"),
    ).first()
    return (row["unreadable"], row["span_ms"] or 0) if row else (0, 0)


def _dropped(decoded: DataFrame) -> int:
    """Events the emitting clients dropped before writing them: per sink, the highest
    count its records carry (a sink's count only grows), summed."""
    if "trace_dropped" not in decoded.columns:  # events a stream stored before it existed
        return 0
    counts = decoded.where(F.col("trace_dropped").isNotNull()).select(
        F.split("trace_dropped", " ").alias("d")
    )
    per_sink = counts.groupBy(F.col("d")[0]).agg(F.max(F.col("d")[1].try_cast("long")).alias("n"))
    row = per_sink.agg(F.sum("n").alias("total")).first()
    return int(row["total"] or 0) if row else 0


def _run(
    events: DataFrame, trace_meta: dict[str, int], bucket_ms: int, job: AuditJob, out: Path
) -> dict[str, Any]:
    policy = job.policy
    outcomes_dir = out / "outcomes"
    computed = _select(audit.message_outcomes(events, policy), job)
    computed.write.mode("overwrite").parquet(str(outcomes_dir))
    # read back (small) rather than computed again; the schema given: no files if empty
    outcomes = events.sparkSession.read.schema(computed.schema).parquet(str(outcomes_dir))
    # one query for the whole report; lateness null where a pair had no forward
    report_rows = audit.group_figures(outcomes).join(
        timing.lateness(events, policy), audit.KEY, "left"
    )
    rows = [row.asDict() for row in report_rows.collect()]
    pairs = [(row["group"], row["topic"]) for row in rows if row["group"] and row["topic"]]
    lag = consumer_lag(job.client, pairs) if job.lag else {}
    meta = {
        "namespace": job.client.namespace,
        "now_ms": policy.now_ms,
        "grace_ms": policy.grace_ms,
        "early_ms": policy.early_ms,
        "late_ms": policy.late_ms,
        "forward_late_ms": policy.forward_late_ms,
        "flow_bin_ms": bucket_ms,
        "trace_schema_fingerprint": FINGERPRINT.hex(),
        **trace_meta,
    }
    report = build_report(rows, lag, meta)
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    _charts(events, job, report, bucket_ms, out)
    return report


def _charts(
    events: DataFrame, job: AuditJob, report: dict[str, Any], bucket_ms: int, out: Path
) -> None:
    flow_events = events.where(_flow(job))
    counts = timing.chart_counts(_select(events, job), flow_events, bucket_ms).collect()
    late = [(row["value"], row["count"]) for row in counts if row["chart"] == "lateness"]
    flow = [(row["value"], row["event"], row["count"]) for row in counts if row["chart"] == "flow"]
    charts.retry_chart(report, out / "retries.png")
    charts.lateness_chart(late, out / "lateness.png")
    charts.flow_chart(flow, bucket_ms, out / "flow.png")


def run_batch(spark: SparkSession, job: AuditJob, out: Path) -> dict[str, Any]:
    """Read the whole trace topic once and audit it (see :func:`run`); only the fields
    the audit reads are decoded."""
    return run(decode_traces(trace_rows(spark, job), audit.EVENT_FIELDS), job, out)


def run_stream(
    spark: SparkSession,
    job: AuditJob,
    out: Path,
    checkpoint: Path,
    trigger_interval: str | None = None,
) -> dict[str, Any] | None:
    """Audit the trace topic as a stream (see the module docstring).

    With no ``trigger_interval`` (``availableNow``) it processes what the topic holds,
    then returns the report; with one (e.g. ``"30 seconds"``) it runs until stopped and
    rewrites the report after every micro-batch.
    """
    stored = out / "events"

    def each_batch(batch: DataFrame, batch_id: int) -> None:
        batch.write.mode("overwrite").parquet(str(stored / f"batch={batch_id}"))
        run(spark.read.parquet(str(stored)), job, out)

    writer = decode_traces(trace_rows(spark, job, stream=True)).writeStream.foreachBatch(each_batch)
    writer = writer.option("checkpointLocation", str(checkpoint))
    if trigger_interval is None:
        writer.trigger(availableNow=True).start().awaitTermination()
        return (
            json.loads((out / "report.json").read_text("utf-8"))
            if (out / "report.json").exists()
            else None
        )
    writer.trigger(processingTime=trigger_interval).start().awaitTermination()
    return None
