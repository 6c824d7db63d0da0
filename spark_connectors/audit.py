"""The audit as pure DataFrame -> DataFrame functions over decoded trace events.

Input: rows of :func:`rmqcompat.spark.decode.decode_traces` passed once through
:func:`normalize` (the caller caches that). Per consumer group and
logical topic, every produced message gets one outcome (:func:`message_outcomes`), and
:func:`group_figures` counts them; :func:`lateness`, :func:`ladder_conformance` and
:func:`flow` give the timing figures; :func:`report_rows` joins what the report needs
into one frame. Nothing here does I/O or collects to the driver.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from rmqcompat.retry import retry_level
from rmqcompat.topics.delay_levels import DEFAULT_MESSAGE_DELAY_LEVEL, DelayLevels
from rmqcompat.topics.naming import RETRY_PREFIX

_KEY = ["group", "topic"]
_MSG = ["group", "topic", "msg_id"]


@dataclass(frozen=True)
class AuditPolicy:
    """What the audit judges against.

    Args:
        now_ms: the audit's "now" (epoch ms): a message is *lost* only once its last
            event is older than ``now_ms - grace_ms``.
        grace_ms: time a message may spend between events (in flight, in a retry topic
            behind consumer lag) before it counts as lost.
        levels: the delay table the clients use (RocketMQ's by default).
        early_ms / late_ms: a retry interval (send-back to the next delivery) is a ladder
            violation outside ``[delay - early_ms, delay + late_ms]``, where delay is the
            ladder's for level ``3 + reconsume_times``.
    """

    now_ms: int
    grace_ms: int = 10 * 60_000
    levels: DelayLevels = field(
        default_factory=lambda: DelayLevels.parse(DEFAULT_MESSAGE_DELAY_LEVEL)
    )
    early_ms: int = 1_000
    late_ms: int = 60_000

    def expected_delays_ms(self) -> list[int]:
        """Index k: the delay before delivery k+1 of a message that failed k times."""
        levels = self.levels
        return [levels.delay_ms(retry_level(levels, k)) for k in range(levels.max_level)]


def _is(event: str) -> Column:
    return F.col("event") == F.lit(event)


def _flag(event: str) -> Column:
    return F.max(_is(event)).alias(event.lower())


def normalize(events: DataFrame) -> DataFrame:
    """Readable events only, with ``group`` filled in for forwarder events bound for a
    retry topic (``%RETRY%<group>``). Each trace record is read once (the sink's producer
    is idempotent; a streaming audit stores each micro-batch once), so no deduplication
    pass is needed."""
    retry_group = F.when(
        F.col("target_topic").startswith(RETRY_PREFIX),
        F.expr(f"substring(target_topic, {len(RETRY_PREFIX) + 1})"),
    )
    return events.where(F.col("trace_error").isNull()).withColumn(
        "group", F.coalesce(F.col("group"), retry_group)
    )


def _published(events: DataFrame) -> DataFrame:
    return (
        events.where(_is("PUBLISH"))
        .groupBy("topic", "msg_id")
        .agg(
            F.min("timestamp_ms").alias("published_ms"),
            # a scheduled (delay level) or timer (due time) message waits parked first
            F.max(F.col("delay_level").isNotNull() | F.col("due_ms").isNotNull()).alias(
                "scheduled"
            ),
        )
    )


def _per_message(events: DataFrame) -> DataFrame:
    consume = _is("CONSUME")
    rt = F.col("reconsume_times")
    return (
        events.where(F.col("group").isNotNull() & F.col("topic").isNotNull())
        .groupBy(*_MSG)
        .agg(
            F.min(F.when(consume & (F.col("status") == "SUCCESS"), rt)).alias("success_rt"),
            F.count(F.when(consume, 1)).alias("deliveries"),
            # a set, not count_distinct: Spark plans that as a second aggregation
            F.size(F.collect_set(F.when(consume, rt))).alias("distinct_deliveries"),
            F.max(F.when(consume, rt)).alias("max_consume_rt"),
            F.max(F.when(_is("FORWARD"), rt)).alias("max_forward_rt"),
            F.max(F.when(_is("SEND_BACK"), rt)).alias("last_send_back_rt"),
            _flag("DEAD_LETTER"),
            _flag("DISCARD"),
            _flag("FILTER"),
            _flag("REPLAY"),
            F.max("timestamp_ms").alias("last_event_ms"),
        )
    )


def _forwarded_ids(events: DataFrame) -> DataFrame:
    return (
        events.where(_is("FORWARD"))
        .select("msg_id")
        .distinct()
        .withColumn("forwarded", F.lit(True))
    )


def message_outcomes(events: DataFrame, policy: AuditPolicy) -> DataFrame:
    """One row per (group, topic, msg_id): every message produced to a topic, for each
    group seen on that topic, plus messages a group consumed without a traced publish.

    Columns: ``produced``, ``published_ms``, ``success_rt`` (reconsume count of the first
    successful delivery), ``deliveries``, ``duplicate_deliveries`` (deliveries beyond one
    per reconsume count), the event flags, ``parked`` and ``outcome``: one of
    ``succeeded``, ``dead_lettered``, ``discarded``, ``filtered``, ``parked``, ``lost``,
    ``pending`` (no success yet, last event within the grace period).
    """
    pairs = (
        events.where(F.col("group").isNotNull() & F.col("topic").isNotNull())
        .select(*_KEY)
        .distinct()
    )
    produced = pairs.join(_published(events), "topic").withColumn("produced", F.lit(True))
    rows = (
        produced.join(_per_message(events), _MSG, "full_outer")
        .join(_forwarded_ids(events), "msg_id", "left")
        .fillna(
            False,
            ["produced", "scheduled", "dead_letter", "discard", "filter", "replay", "forwarded"],
        )
        .fillna(0, ["deliveries", "distinct_deliveries"])
    )
    rt = F.col("last_send_back_rt")
    later = F.greatest(F.col("max_consume_rt"), F.col("max_forward_rt"))
    succeeded = F.col("success_rt").isNotNull()
    settled = succeeded | F.col("dead_letter") | F.col("discard")
    waiting_retry = rt.isNotNull() & (later.isNull() | (later <= rt))
    waiting_schedule = F.col("scheduled") & ~F.col("forwarded") & (F.col("deliveries") == 0)
    parked = ~settled & (waiting_retry | waiting_schedule)
    last = F.coalesce(F.col("last_event_ms"), F.col("published_ms"))
    outcome = (
        F.when(succeeded, "succeeded")
        .when(F.col("dead_letter"), "dead_lettered")
        .when(F.col("discard"), "discarded")
        .when(F.col("filter") & (F.col("deliveries") == 0), "filtered")
        .when(parked, "parked")
        .when(last < F.lit(policy.now_ms - policy.grace_ms), "lost")
        .otherwise("pending")
    )
    return rows.select(
        *_MSG,
        "produced",
        "published_ms",
        "success_rt",
        "deliveries",
        (F.col("deliveries") - F.col("distinct_deliveries")).alias("duplicate_deliveries"),
        F.col("dead_letter").alias("dead_lettered"),
        F.col("discard").alias("discarded"),
        F.col("filter").alias("filtered"),
        F.col("replay").alias("replayed"),
        "last_event_ms",
        outcome.alias("outcome"),
    )


def _count(condition: Column, name: str) -> Column:
    return F.count(F.when(condition, 1)).alias(name)


#: The counts :func:`group_figures` gives per group and topic.
FIGURES = (
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


def group_figures(outcomes: DataFrame) -> DataFrame:
    """Per (group, topic): the counts of :data:`FIGURES` and ``retried``, a map from
    retries (>= 1) to the messages that succeeded after that many. One aggregation: counts
    per (group, topic, ``success_rt``) first, then summed per (group, topic)."""
    produced = F.col("produced")
    outcome = F.col("outcome")
    per_retries = outcomes.groupBy(*_KEY, "success_rt").agg(
        _count(produced, "produced"),
        _count(F.col("success_rt") == 0, "succeeded_first_time"),
        _count(outcome == "dead_lettered", "dead_lettered"),
        _count(outcome == "discarded", "discarded"),
        _count(F.col("replayed"), "replayed"),
        _count(outcome == "parked", "parked"),
        _count(produced & (outcome == "lost"), "lost"),
        F.sum("duplicate_deliveries").alias("duplicate_deliveries"),
        _count(outcome == "filtered", "filtered"),
        _count(outcome == "pending", "pending"),
        F.count("*").alias("messages"),
    )
    bar = F.struct(F.col("success_rt").alias("retries"), F.col("messages"))
    return per_retries.groupBy(*_KEY).agg(
        *[F.sum(name).alias(name) for name in FIGURES],
        # collect_list skips the nulls of the rows with fewer than one retry
        F.map_from_entries(F.collect_list(F.when(F.col("success_rt") >= 1, bar))).alias("retried"),
    )


def _late_ms(events: DataFrame) -> DataFrame:
    forwards = events.where(_is("FORWARD") & F.col("due_ms").isNotNull())
    return forwards.select(*_KEY, (F.col("timestamp_ms") - F.col("due_ms")).alias("late_ms"))


def lateness(events: DataFrame) -> DataFrame:
    """Per (group, topic): forwarder lateness (delivery time - due time, ms) p50, p99, max;
    ``group`` is null for scheduled messages (no consumer group involved)."""
    quantiles = F.percentile_approx("late_ms", [0.5, 0.99], 10_000)
    return (
        _late_ms(events)
        .groupBy(*_KEY)
        .agg(quantiles.alias("q"), F.max("late_ms").alias("max"), F.count("*").alias("forwards"))
        .select(*_KEY, F.col("q")[0].alias("p50"), F.col("q")[1].alias("p99"), "max", "forwards")
    )


def lateness_counts(events: DataFrame) -> DataFrame:
    """Forwards per lateness value (``late_ms``, ``forwards``) over all of ``events``:
    the lateness chart's distribution, as small as the number of distinct values."""
    return _late_ms(events).groupBy("late_ms").agg(F.count("*").alias("forwards"))


def ladder_conformance(events: DataFrame, policy: AuditPolicy) -> DataFrame:
    """One row per judged retry: a send-back (after delivery k failed) and the first
    delivery k+1 that followed; ``interval_ms``, ``expected_ms`` (ladder delay of level
    3 + k) and ``violation``. Retries still parked are not judged yet.

    One aggregation keyed by (message, k): send-backs at reconsume count k and
    deliveries at k + 1 fall into the same group (null keys pair with nothing)."""
    send_back, consume = _is("SEND_BACK"), _is("CONSUME")
    k = F.when(send_back, F.col("reconsume_times")).otherwise(F.col("reconsume_times") - 1)
    keyed = F.col("group").isNotNull() & F.col("topic").isNotNull() & F.col("msg_id").isNotNull()
    pairs = (
        events.where((send_back | consume) & keyed & k.isNotNull())
        .groupBy(*_MSG, k.alias("reconsume_times"))
        .agg(
            F.max(F.when(send_back, F.col("timestamp_ms"))).alias("sent_ms"),
            F.min(F.when(consume, F.col("timestamp_ms"))).alias("next_ms"),
        )
        .where(F.col("sent_ms").isNotNull() & F.col("next_ms").isNotNull())
    )
    delays = F.array(*[F.lit(ms) for ms in policy.expected_delays_ms()])
    index = F.least(F.col("reconsume_times") + 1, F.lit(policy.levels.max_level))
    interval = F.col("next_ms") - F.col("sent_ms")
    expected = F.element_at(delays, index)
    return pairs.select(
        *_MSG, "reconsume_times", interval.alias("interval_ms"), expected.alias("expected_ms")
    ).withColumn(
        "violation",
        (F.col("interval_ms") < F.col("expected_ms") - policy.early_ms)
        | (F.col("interval_ms") > F.col("expected_ms") + policy.late_ms),
    )


def ladder_violations(conformance: DataFrame) -> DataFrame:
    """Per (group, topic): judged retries and violations of :func:`ladder_conformance`."""
    return conformance.groupBy(*_KEY).agg(
        F.count("*").alias("retries_judged"), _count(F.col("violation"), "ladder_violations")
    )


def report_rows(outcomes: DataFrame, events: DataFrame, policy: AuditPolicy) -> DataFrame:
    """One row per (group, topic) of ``outcomes``: :func:`group_figures`, with
    :func:`lateness` and :func:`ladder_violations` of ``events`` joined on (null where
    the pair had no forward / no judged retry); one query for the whole report."""
    return (
        group_figures(outcomes)
        .join(lateness(events), _KEY, "left")
        .join(ladder_violations(ladder_conformance(events, policy)), _KEY, "left")
    )


def flow(events: DataFrame, bucket_ms: int) -> DataFrame:
    """Events per time bucket and type (``bucket_ms`` wide), for the flow chart."""
    bucket = (F.floor(F.col("timestamp_ms") / bucket_ms) * bucket_ms).cast("long")
    return events.groupBy(bucket.alias("bucket_ms"), "event").agg(F.count("*").alias("events"))
