"""The audit as pure DataFrame -> DataFrame functions over decoded trace events.

Input: rows of :func:`rmqcompat.spark.decode.decode_traces` passed once through
:func:`normalize` (the caller caches that). Per consumer group and logical topic, every
produced message gets one outcome (:func:`message_outcomes`, which also judges its retries
against the due times their send-backs recorded), and :func:`group_figures` counts them
(:mod:`.timing` has the forwarder's lateness and the charts' counts). Nothing here does
I/O or collects to the driver.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from rmqcompat.retry import retry_level
from rmqcompat.topics.delay_levels import DEFAULT_MESSAGE_DELAY_LEVEL, DelayLevels
from rmqcompat.topics.naming import RETRY_PREFIX

#: The trace fields the audit reads (decoding can skip the others).
EVENT_FIELDS = (
    "event",
    "timestamp_ms",
    "group",
    "topic",
    "msg_id",
    "status",
    "reconsume_times",
    "delay_level",
    "due_ms",
    "target_topic",
)
#: What the report has one row of: a consumer group and a logical topic.
KEY = ["group", "topic"]
_MSG = ["group", "topic", "msg_id"]


@dataclass(frozen=True)
class AuditPolicy:
    """What the audit judges against.

    Args:
        now_ms: the audit's "now" (epoch ms): a message is *lost* only once its last
            event is older than ``now_ms - grace_ms``.
        grace_ms: time a message may spend between events (in flight, in a retry topic
            behind consumer lag) before it counts as lost.
        early_ms / late_ms: a retry (a send-back, and the next delivery of its message to
            the group) breaks the ladder when that delivery comes more than ``early_ms``
            before, or more than ``late_ms`` after, the due time the send-back recorded
            (the one its parked record carries and the forwarder acts on). ``late_ms``
            covers the forwarder's lateness and the group's consumer lag together.
        forward_late_ms: a forward more than this after its due time counts in
            ``late_forwards``: the forwarder's own delay, flagged even while the
            consumers' slack keeps the retries it carries within ``late_ms``.
        levels: only for send-backs traced without a due time (older clients): such a
            retry is due its send-back time plus this table's delay for level
            ``3 + reconsume_times`` (RocketMQ's table by default).

    Raises:
        ValueError: a negative window or threshold.
    """

    now_ms: int
    grace_ms: int = 10 * 60_000
    levels: DelayLevels = field(
        default_factory=lambda: DelayLevels.parse(DEFAULT_MESSAGE_DELAY_LEVEL)
    )
    early_ms: int = 1_000
    late_ms: int = 60_000
    forward_late_ms: int = 1_000

    def __post_init__(self) -> None:
        for name in ("grace_ms", "early_ms", "late_ms", "forward_late_ms"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative, got {getattr(self, name)}")

    def expected_delays_ms(self) -> list[int]:
        """Index k: the delay of :attr:`levels` before delivery k+1 of a message that
        failed k times (the due time of send-backs traced without one)."""
        levels = self.levels
        return [levels.delay_ms(retry_level(levels, k)) for k in range(levels.max_level)]


def is_event(event: str) -> Column:
    """The rows of trace events of type ``event``."""
    return F.col("event") == F.lit(event)


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


#: What a row of :func:`_message_rows` is, as a small integer: cheaper to shuffle and to
#: compare than the event and status strings. The group's own events first (a delivery
#: that succeeded has its own code), then the copies of a topic's publishes and forwards.
_OWN_CODES = {
    "CONSUME": 2,
    "SEND_BACK": 3,
    "FORWARD": 4,
    "DEAD_LETTER": 5,
    "DISCARD": 6,
    "FILTER": 7,
    "REPLAY": 8,
}
_DELIVERED_OK = 1
_OTHER_OWN = 9
_PUBLISH_COPY = 10
_FORWARD_COPY = 11


def _own_code() -> Column:
    """The code of one of a group's own events (see :data:`_OWN_CODES`)."""
    code = F.when(is_event("CONSUME") & (F.col("status") == "SUCCESS"), _DELIVERED_OK)
    for event, value in _OWN_CODES.items():
        code = code.when(is_event(event), value)
    return code.otherwise(_OTHER_OWN).cast("tinyint")


def _message_rows(events: DataFrame) -> DataFrame:
    """What each (group, topic, msg_id) is judged from, as one frame of ``code`` (see
    :data:`_OWN_CODES`), reconsume count, time, ``due_ms`` (a send-back's recorded due
    time, else null) and ``scheduled``: the group's own events,
    and a copy of each publish and of each forward of the topic for every group seen on
    it (a forward marks its message forwarded for every group). Repartitioned by msg_id,
    so that the aggregations per message after it need no further shuffle."""
    keyed = F.col("group").isNotNull() & F.col("topic").isNotNull()
    pairs = F.broadcast(events.where(keyed).select(*KEY).distinct())
    scheduled = F.col("delay_level").isNotNull() | F.col("due_ms").isNotNull()
    columns = ["reconsume_times", "timestamp_ms"]
    own = events.where(keyed).select(
        *_MSG,
        *columns,
        _own_code().alias("code"),
        F.when(is_event("SEND_BACK"), F.col("due_ms")).alias("due_ms"),
        F.lit(None).cast("boolean").alias("scheduled"),
    )
    copy_code = F.when(is_event("PUBLISH"), _PUBLISH_COPY).otherwise(_FORWARD_COPY).cast("tinyint")
    copies = (
        events.where(is_event("PUBLISH") | is_event("FORWARD"))
        .select("topic", "msg_id", *columns, copy_code.alias("code"), scheduled.alias("scheduled"))
        .join(pairs, "topic")
        .select(*_MSG, *columns, "code", F.lit(None).cast("long").alias("due_ms"), "scheduled")
    )
    return own.unionByName(copies).repartition("msg_id")


def _retry_step(rows: DataFrame) -> DataFrame:
    """:func:`_message_rows` folded per (group, topic, msg_id, ``k``): ``k`` is the
    reconsume count a send-back was made at and the one before a delivery's (and a
    forward's, which carries the next delivery's count), so one row holds a send-back
    after delivery k fails and the deliveries that follow it (one reconsume count each),
    which is what the ladder judges (``sent_ms`` and ``due_ms`` of the send-back,
    ``next_ms`` of the first delivery after it); a publish folds with the first delivery
    (k = -1), so a message delivered once is one row; other events fold by their own
    count. Clustered by msg_id like its input (no shuffle). Every column is a partial of
    :func:`_per_message`'s: distinct deliveries are counted as rows, with no set per
    message."""
    code = F.col("code")
    own, copy = code < _PUBLISH_COPY, code == _PUBLISH_COPY
    consume = (code == _DELIVERED_OK) | (code == _OWN_CODES["CONSUME"])
    send_back = code == _OWN_CODES["SEND_BACK"]
    own_forward = code == _OWN_CODES["FORWARD"]
    rt, at = F.col("reconsume_times"), F.col("timestamp_ms")
    next_delivery = consume | own_forward | (code == _FORWARD_COPY)
    k = F.when(copy, -1).when(next_delivery, rt - 1).otherwise(rt)
    return rows.groupBy(*_MSG, k.alias("k")).agg(
        F.max(copy).alias("produced"),
        F.min(F.when(copy, at)).alias("published_ms"),
        # a scheduled (delay level) or timer (due time) message waits parked first
        F.max(F.when(copy, F.col("scheduled"))).alias("scheduled"),
        F.min(F.when(code == _DELIVERED_OK, rt)).alias("success_rt"),
        count_where(consume, "deliveries"),
        F.max(consume & rt.isNotNull()).alias("delivered"),
        F.max(F.when(consume, rt)).alias("max_consume_rt"),
        F.max(F.when(own_forward, rt)).alias("max_forward_rt"),
        F.max(F.when(send_back, rt)).alias("last_send_back_rt"),
        *[
            F.max(F.when(own, code == _OWN_CODES[event])).alias(event.lower())
            for event in ("DEAD_LETTER", "DISCARD", "FILTER", "REPLAY")
        ],
        F.max(F.when(own, at)).alias("last_event_ms"),
        F.max(code == _FORWARD_COPY).alias("forwarded"),
        F.max(code != _FORWARD_COPY).alias("seen"),
        F.max(F.when(send_back, at)).alias("sent_ms"),
        F.max(F.when(send_back, F.col("due_ms"))).alias("due_ms"),
        F.min(F.when(consume, at)).alias("next_ms"),
    )


def _per_message(rows: DataFrame, policy: AuditPolicy) -> DataFrame:
    """One row per (group, topic, msg_id) of :func:`_message_rows`, with
    ``retries_judged``, its retries the ladder judged (a send-back after delivery k and
    the first delivery with reconsume count k+1; retries still parked are not judged
    yet), and ``ladder_violations``, how many of them came outside their window around
    the due time the send-back recorded (:func:`ladder_violation`)."""
    judged = (
        F.col("msg_id").isNotNull() & F.col("sent_ms").isNotNull() & F.col("next_ms").isNotNull()
    )
    violation = judged & ladder_violation(
        F.col("next_ms"), F.col("sent_ms"), F.col("due_ms"), F.col("k"), policy
    )
    return (
        _retry_step(rows)
        .groupBy(*_MSG)
        .agg(
            *[F.max(name).alias(name) for name in _LATEST],
            *[F.min(name).alias(name) for name in ("published_ms", "success_rt")],
            F.sum("deliveries").alias("deliveries"),
            count_where(F.col("delivered"), "distinct_deliveries"),
            count_where(judged, "retries_judged"),
            count_where(violation, "ladder_violations"),
        )
        # a message only forwarded (no publish, no event of the group) is not one
        .where(F.col("seen"))
    )


#: Columns of :func:`_retry_step` that :func:`_per_message` takes the maximum of: flags
#: (any row), the last event and the highest reconsume counts.
_LATEST = (
    "produced",
    "scheduled",
    "dead_letter",
    "discard",
    "filter",
    "replay",
    "last_event_ms",
    "forwarded",
    "seen",
    "max_consume_rt",
    "max_forward_rt",
    "last_send_back_rt",
)


def ladder_violation(
    delivered_ms: Column, sent_ms: Column, due_ms: Column, k: Column, policy: AuditPolicy
) -> Column:
    """Whether a retry breaks the ladder: delivered at ``delivered_ms``, outside
    ``[due - early_ms, due + late_ms]``. ``due`` is what its send-back (made at ``sent_ms``
    after delivery ``k`` >= 0 failed) recorded as ``due_ms``: the due time of the parked
    record, whatever table the client had. A send-back traced without one (older
    clients) is due ``sent_ms`` plus the delay of :attr:`AuditPolicy.levels` for level
    ``3 + k``."""
    delays = F.array(*[F.lit(ms) for ms in policy.expected_delays_ms()])
    # k < 0 (a first delivery) is never judged; the index stays valid for it all the same,
    # since Spark may evaluate this before the condition that excludes it
    index = F.least(F.greatest(k, F.lit(0)) + 1, F.lit(policy.levels.max_level))
    due = F.coalesce(due_ms, sent_ms + F.element_at(delays, index))
    return (delivered_ms < due - policy.early_ms) | (delivered_ms > due + policy.late_ms)


def message_outcomes(events: DataFrame, policy: AuditPolicy) -> DataFrame:
    """One row per (group, topic, msg_id): every message produced to a topic, for each
    group seen on that topic, plus messages a group consumed without a traced publish.

    Columns: ``produced``, ``published_ms``, ``success_rt`` (reconsume count of the first
    successful delivery), ``deliveries``, ``duplicate_deliveries`` (deliveries beyond one
    per reconsume count), the event flags, ``retries_judged`` and ``ladder_violations``
    (:func:`_per_message`) and ``outcome``: one of
    ``succeeded``, ``dead_lettered``, ``discarded``, ``filtered``, ``parked``, ``lost``,
    ``pending`` (no success yet, last event within the grace period).
    """
    rows = _per_message(_message_rows(events), policy).fillna(
        False, ["scheduled", "dead_letter", "discard", "filter", "replay"]
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
        "retries_judged",
        "ladder_violations",
        outcome.alias("outcome"),
    )


def count_where(condition: Column, name: str) -> Column:
    """The number of rows where ``condition`` holds, as column ``name``."""
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


#: The ladder's counts per message (:func:`_per_message`), summed per group and topic.
_LADDER = ("retries_judged", "ladder_violations")


def group_figures(outcomes: DataFrame) -> DataFrame:
    """Per (group, topic): the counts of :data:`FIGURES`, ``retries_judged`` and
    ``ladder_violations``, and ``retried``, a map from
    retries (>= 1) to the messages that succeeded after that many. One aggregation: counts
    per (group, topic, ``success_rt``) first, then summed per (group, topic)."""
    produced = F.col("produced")
    outcome = F.col("outcome")
    per_retries = outcomes.groupBy(*KEY, "success_rt").agg(
        count_where(produced, "produced"),
        count_where(F.col("success_rt") == 0, "succeeded_first_time"),
        count_where(outcome == "dead_lettered", "dead_lettered"),
        count_where(outcome == "discarded", "discarded"),
        count_where(F.col("replayed"), "replayed"),
        count_where(outcome == "parked", "parked"),
        count_where(produced & (outcome == "lost"), "lost"),
        F.sum("duplicate_deliveries").alias("duplicate_deliveries"),
        count_where(outcome == "filtered", "filtered"),
        count_where(outcome == "pending", "pending"),
        *[F.sum(name).alias(name) for name in _LADDER],
        F.count("*").alias("messages"),
    )
    bar = F.struct(F.col("success_rt").alias("retries"), F.col("messages"))
    return per_retries.groupBy(*KEY).agg(
        *[F.sum(name).alias(name) for name in (*FIGURES, *_LADDER)],
        # collect_list skips the nulls of the rows with fewer than one retry
        F.map_from_entries(F.collect_list(F.when(F.col("success_rt") >= 1, bar))).alias("retried"),
    )
