"""The audit's timing figures over decoded trace events: the forwarder's lateness per
group and topic (:func:`lateness`) and the charts' small aggregates (:func:`chart_counts`),
both from the due time each forward acted on (:func:`late_ms`)."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from rmqcompat.spark.audit import KEY, AuditPolicy, count_where, is_event


def late_ms(events: DataFrame) -> DataFrame:
    """Each forward's lateness: when the forwarder produced it (``timestamp_ms``, its
    clock) minus the due time it acted on (``due_ms``, the parked record's, which the
    send-back or the producer recorded)."""
    forwards = events.where(is_event("FORWARD") & F.col("due_ms").isNotNull())
    return forwards.select(*KEY, (F.col("timestamp_ms") - F.col("due_ms")).alias("late_ms"))


def lateness(events: DataFrame, policy: AuditPolicy) -> DataFrame:
    """Per (group, topic): forwarder lateness (:func:`late_ms`, ms) ``p50``, ``p99``
    (nearest rank, exact below 10,000 forwards) and ``max``, ``forwards``, and
    ``late_forwards``, those later than ``policy.forward_late_ms``; ``group`` is null for
    scheduled messages (no consumer group involved)."""
    quantiles = F.percentile_approx("late_ms", [0.5, 0.99], 10_000)
    late = F.col("late_ms") > policy.forward_late_ms
    return (
        late_ms(events)
        .groupBy(*KEY)
        .agg(
            quantiles.alias("q"),
            F.max("late_ms").alias("max"),
            F.count("*").alias("forwards"),
            count_where(late, "late_forwards"),
        )
        .select(
            *KEY,
            F.col("q")[0].alias("p50"),
            F.col("q")[1].alias("p99"),
            "max",
            "forwards",
            "late_forwards",
        )
    )


def chart_counts(late: DataFrame, flow: DataFrame, bucket_ms: int) -> DataFrame:
    """The charts' small aggregates in one query: rows with ``chart`` ``lateness``
    (``value``: forwarder lateness in ms over the forwards of ``late``, as
    :func:`lateness` computes it; ``event`` null)
    and rows with ``chart`` ``flow`` (``value``: start of a ``bucket_ms`` wide time
    bucket, ``event``: its type, over the events of ``flow``); ``count`` of each."""
    no_event = F.lit(None).cast("string").alias("event")
    bucket = (F.floor(F.col("timestamp_ms") / bucket_ms) * bucket_ms).cast("long")
    lateness_values = late_ms(late).select(
        F.lit("lateness").alias("chart"), F.col("late_ms").alias("value"), no_event
    )
    flow_values = flow.select(F.lit("flow").alias("chart"), bucket.alias("value"), "event")
    return (
        lateness_values.unionByName(flow_values)
        .groupBy("chart", "value", "event")
        .agg(F.count("*").alias("count"))
    )
