"""The whole topic topology of a deployment: build it (pure), provision it, verify it.

A topology holds every topic rmqcompat needs for some groups and business topics: the
business topics, ``%RETRY%G`` and ``%DLQ%G`` per group, one topic per delay level, the
trace, quarantine and replay-ledger topics (and the transaction topics where asked), each
with the :class:`TopicSpec` of its kind. Every client plans the internal topics it creates
here (:func:`consumer_topology`, :func:`delay_topology`, :func:`system_topology`): no other
module decides an internal topic's spec.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

from rmqcompat.errors import ConfigError, InvalidNameError, TopologyError
from rmqcompat.message import DEFAULT_MAX_MESSAGE_SIZE
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.naming import (
    QUARANTINE_TOPIC,
    RECALL_TOPIC,
    REPLAY_LOG_TOPIC,
    TRACE_TOPIC,
    TRANS_CHECK_MAX_TIME_TOPIC,
    TRANS_HALF_TOPIC,
    TRANS_OP_HALF_TOPIC,
    attempt_topic,
    dlq_topic,
    is_internal,
    retry_topic,
    to_kafka_topic,
    validate_group,
    validate_namespace,
    validate_topic,
)
from rmqcompat.topics.provision import ADMIN_TIMEOUT_S, ensure_topics
from rmqcompat.topics.spec import BROKER_DEFAULT, TopicSpec, TopologySpec

Kind = Literal[
    "business",
    "retry",
    "dlq",
    "delay",
    "trace",
    "quarantine",
    "transaction",
    "ledger",
    "attempts",
    "recall",
]
KINDS: tuple[Kind, ...] = get_args(Kind)
Problem = Literal["missing", "partitions", "replication", "config"]


@dataclass(frozen=True)
class PlannedTopic:
    """One topic of a topology: its logical and physical name, kind and spec."""

    logical: str
    physical: str
    kind: Kind
    spec: TopicSpec


@dataclass(frozen=True)
class Topology:
    """Every topic of a deployment (in a namespace); immutable, built by :func:`build_topology`."""

    namespace: str
    topics: tuple[PlannedTopic, ...]

    def names(self) -> dict[str, str]:
        """Logical name -> physical Kafka name, in topology order."""
        return {topic.logical: topic.physical for topic in self.topics}

    def specs(self) -> dict[str, TopicSpec]:
        """Logical name -> spec, as :func:`ensure_topics` takes it."""
        return {topic.logical: topic.spec for topic in self.topics}


def build_topology(
    *,
    groups: Iterable[str] = (),
    topics: Iterable[str] = (),
    levels: DelayLevels | None = None,
    spec: TopologySpec | None = None,
    namespace: str = "",
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    transaction_groups: Iterable[str] = (),
    simple_groups: Iterable[str] = (),
) -> Topology:
    """Build the topology for ``groups`` and business ``topics`` (pure, no I/O).

    Args:
        groups: consumer groups; each gets ``%RETRY%<group>`` and ``%DLQ%<group>``.
        topics: business topics (logical RocketMQ names); duplicates are ignored.
        levels: the delay table (RocketMQ's default when None); one topic per level.
        spec: partitions, replication and configs per kind (defaults when None).
        namespace: isolates the physical names ("" for none).
        max_message_size: the clients' largest body; every topic gets a
            ``max.message.bytes`` that fits it (unless ``spec`` sets one).
        transaction_groups: transactional producer groups; any adds the half and op
            topics (:func:`transaction_topics`), which the groups of a namespace share.
        simple_groups: groups of RocketMQ 5 SimpleConsumers; each gets what ``groups``
            get and its attempt log ``%ATTEMPT%<group>``.

    Raises:
        InvalidNameError: a name or the namespace is illegal, a physical name would break
            Kafka's 249-character rule, or a business topic is one of the internal kinds.
        ConfigError: ``max_message_size`` is not positive.
    """
    wanted: dict[str, Kind] = {}
    for topic in topics:
        wanted[_business_topic(topic)] = "business"
    for group in groups:
        wanted.update(_group_topics(group, dead_letter=True))
    for group in simple_groups:
        wanted.update(_group_topics(group, dead_letter=True))
        wanted[attempt_topic(group)] = "attempts"
    wanted.update(_level_topics(levels))
    wanted.update(_SYSTEM_TOPICS)
    wanted[RECALL_TOPIC] = "recall"
    wanted[REPLAY_LOG_TOPIC] = "ledger"
    if [validate_group(group) for group in transaction_groups]:
        wanted.update(dict.fromkeys(transaction_topics(), "transaction"))
    return _plan(wanted, spec, namespace, max_message_size)


# --- what each client creates at start-up: subsets of a topology, built by the same rules


def consumer_topology(
    group: str,
    *,
    levels: DelayLevels,
    broadcasting: bool,
    dead_letter: bool,
    orderly: bool = False,
    spec: TopologySpec | None = None,
    namespace: str = "",
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
) -> Topology:
    """The internal topics a push consumer of ``group`` writes to or reads: its retry
    topic, the level topics of its table and its DLQ (unless ``dead_letter`` is off), the
    system topics. A BROADCASTING consumer never sends back: an orderly one still
    dead-letters (so its DLQ), a concurrent one needs only the system topics."""
    wanted: dict[str, Kind] = {}
    if not broadcasting:
        wanted.update(_group_topics(group, dead_letter))
        wanted.update(_level_topics(levels))
    elif orderly and dead_letter:
        wanted[dlq_topic(group)] = "dlq"
    wanted.update(_SYSTEM_TOPICS)
    return _plan(wanted, spec, namespace, max_message_size)


def attempt_topology(
    group: str,
    *,
    spec: TopologySpec | None = None,
    namespace: str = "",
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
) -> Topology:
    """What a RocketMQ 5 SimpleConsumer of ``group`` creates besides its core consumers'
    topics (:func:`consumer_topology`): the group's attempt log."""
    return _plan({attempt_topic(group): "attempts"}, spec, namespace, max_message_size)


def delay_topology(
    *,
    levels: DelayLevels,
    spec: TopologySpec | None = None,
    namespace: str = "",
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
) -> Topology:
    """The level topics of ``levels``, the recall topic and the system topics: what a
    delay-forwarder serves, reads and writes to, and where a producer parks delayed
    messages and recalls timer messages."""
    wanted = {**_level_topics(levels), RECALL_TOPIC: "recall", **_SYSTEM_TOPICS}
    return _plan(wanted, spec, namespace, max_message_size)


def replay_topology(
    group: str,
    *,
    to_retry_topic: bool,
    spec: TopologySpec | None = None,
    namespace: str = "",
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
) -> Topology:
    """What a dead-letter replay of ``group`` creates: the replay ledger, and the group's
    retry topic when it replays there (an original topic is never created by a replay)."""
    wanted: dict[str, Kind] = {REPLAY_LOG_TOPIC: "ledger"}
    if to_retry_topic:
        wanted[retry_topic(group)] = "retry"
    return _plan(wanted, spec, namespace, max_message_size)


def system_topology(
    *logical: str,
    spec: TopologySpec | None = None,
    namespace: str = "",
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
) -> Topology:
    """The named system topics (trace, quarantine, replay ledger, transaction half and op),
    each with the spec of its kind: what the trace sink, the replay and a transactional
    producer create.

    Raises:
        InvalidNameError: a name is not a system topic.
    """
    unknown = [name for name in logical if name not in _SYSTEM_KINDS]
    if unknown:
        raise InvalidNameError(f"not system topics: {', '.join(map(repr, unknown))}")
    wanted = {name: _SYSTEM_KINDS[name] for name in logical}
    return _plan(wanted, spec, namespace, max_message_size)


#: What every client creates besides its own topics (its events and poison records go there).
_SYSTEM_TOPICS: dict[str, Kind] = {TRACE_TOPIC: "trace", QUARANTINE_TOPIC: "quarantine"}
_SYSTEM_KINDS: dict[str, Kind] = {
    **_SYSTEM_TOPICS,
    REPLAY_LOG_TOPIC: "ledger",
    RECALL_TOPIC: "recall",
    TRANS_HALF_TOPIC: "transaction",
    TRANS_OP_HALF_TOPIC: "transaction",
    TRANS_CHECK_MAX_TIME_TOPIC: "transaction",
}


def _group_topics(group: str, dead_letter: bool) -> dict[str, Kind]:
    wanted: dict[str, Kind] = {retry_topic(group): "retry"}
    if dead_letter:
        wanted[dlq_topic(group)] = "dlq"
    return wanted


def _level_topics(levels: DelayLevels | None) -> dict[str, Kind]:
    levels = levels if levels is not None else DelayLevels.parse()
    return dict.fromkeys(levels.topics(), "delay")


def _plan(
    wanted: Mapping[str, Kind],
    spec: TopologySpec | None,
    namespace: str,
    max_message_size: int,
) -> Topology:
    if max_message_size <= 0:
        raise ConfigError(f"max_message_size must be > 0, not {max_message_size}")
    sized = (spec if spec is not None else TopologySpec()).sized_for(max_message_size)
    validate_namespace(namespace)
    planned = (
        PlannedTopic(logical, to_kafka_topic(logical, namespace), kind, getattr(sized, kind))
        for logical, kind in wanted.items()
    )
    return Topology(namespace, tuple(planned))


def _business_topic(topic: str) -> str:
    validate_topic(topic)
    if is_internal(topic):
        raise InvalidNameError(
            f"business topic {topic!r} is an internal rmqcompat topic name "
            "(%RETRY%, %DLQ%, %SCHEDULE% or a system topic); pass groups for retry/DLQ topics"
        )
    return topic


def transaction_topics() -> tuple[str, str, str]:
    """The logical topics of transactional messages (one set per namespace): half, op, and
    the copies of halves discarded after ``check_max`` checks."""
    return TRANS_HALF_TOPIC, TRANS_OP_HALF_TOPIC, TRANS_CHECK_MAX_TIME_TOPIC


def with_partitions(spec: TopologySpec, partitions: Mapping[str, int]) -> TopologySpec:
    """A copy of ``spec`` with the partition counts of some kinds replaced.

    Raises:
        ConfigError: an unknown kind or a count below 1.
    """
    return _per_kind(spec, "partitions", partitions)


def with_replication(spec: TopologySpec, factors: Mapping[str, int | None]) -> TopologySpec:
    """A copy of ``spec`` with the replication factors of some kinds replaced (a number,
    ``-1`` for the broker's default, ``None`` for ``min(3, brokers)``).

    Raises:
        ConfigError: an unknown kind or an illegal factor.
    """
    return _per_kind(spec, "replication_factor", factors)


def _per_kind(spec: TopologySpec, setting: str, values: Mapping[str, object]) -> TopologySpec:
    changes: dict[str, TopicSpec] = {}
    for kind, value in values.items():
        if kind not in KINDS:
            raise ConfigError(f"unknown topic kind {kind!r}; kinds are {', '.join(KINDS)}")
        changes[kind] = dataclasses.replace(getattr(spec, kind), **{setting: value})
    return dataclasses.replace(spec, **changes)


# --- provisioning ------------------------------------------------------------------------


@dataclass(frozen=True)
class ProvisionResult:
    """Physical names created by this call and those that existed already."""

    created: tuple[str, ...]
    existing: tuple[str, ...]


def provision_topology(admin_settings: Mapping[str, Any], topology: Topology) -> ProvisionResult:
    """Create the missing topics of ``topology`` (idempotent; existing topics are kept as is).

    Raises:
        TopologyError: the broker refused to create a topic.
    """
    created = set(ensure_topics(admin_settings, topology.specs(), topology.namespace))
    physical = [topic.physical for topic in topology.topics]
    return ProvisionResult(
        created=tuple(name for name in physical if name in created),
        existing=tuple(name for name in physical if name not in created),
    )


# --- verification ------------------------------------------------------------------------


@dataclass(frozen=True)
class Mismatch:
    """One difference between the planned topology and the cluster."""

    logical: str
    physical: str
    problem: Problem
    expected: str
    actual: str

    def __str__(self) -> str:
        return (
            f"{self.physical} ({self.logical}): {self.problem} "
            f"expected {self.expected}, found {self.actual}"
        )


@dataclass(frozen=True)
class VerifyReport:
    """The result of :func:`verify_topology`.

    ``unchecked`` lists ``physical:config`` pairs the broker did not describe (some
    Kafka-protocol brokers only describe explicitly set configs); they are not mismatches.
    """

    mismatches: tuple[Mismatch, ...]
    unchecked: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def raise_for_mismatches(self) -> None:
        """Raise :class:`TopologyError` listing every mismatch, if there is any."""
        if self.mismatches:
            raise TopologyError(str(self))

    def __str__(self) -> str:
        if self.ok:
            return "topology ok"
        lines = [f"{len(self.mismatches)} topology mismatch(es):"]
        lines += [f"  {mismatch}" for mismatch in self.mismatches]
        return "\n".join(lines)


def verify_topology(admin_settings: Mapping[str, Any], topology: Topology) -> VerifyReport:
    """Check that every topic exists with its partition count, replication and configs.

    Replication is checked against what the spec asks on the cluster as it is now
    (:meth:`TopicSpec.on_cluster` with the brokers listed): a topic with fewer replicas in
    any partition is a mismatch; more is not.

    Returns a report; call :meth:`VerifyReport.raise_for_mismatches` to turn it into an error.

    Raises:
        TopologyError: the cluster's metadata could not be read.
    """
    admin = AdminClient(dict(admin_settings))
    try:
        cluster = admin.list_topics(timeout=ADMIN_TIMEOUT_S)
    except KafkaException as exc:
        raise TopologyError(f"could not list topics: {exc.args[0]}") from exc
    metadata = cluster.topics
    mismatches: list[Mismatch] = []
    present: list[PlannedTopic] = []
    for planned in topology.topics:
        topic = dataclasses.replace(planned, spec=planned.spec.on_cluster(len(cluster.brokers)))
        found = _layout_mismatches(topic, metadata.get(topic.physical))
        mismatches += found
        if not any(m.problem == "missing" for m in found):
            present.append(topic)
    config_mismatches, unchecked = _config_mismatches(admin, present)
    return VerifyReport(tuple(mismatches + config_mismatches), tuple(unchecked))


def _layout_mismatches(topic: PlannedTopic, metadata: Any) -> list[Mismatch]:
    if metadata is None or metadata.error is not None:
        return [Mismatch(topic.logical, topic.physical, "missing", "topic", "nothing")]
    out = []
    partitions = len(metadata.partitions)
    if partitions != topic.spec.partitions:
        out.append(_mismatch(topic, "partitions", topic.spec.partitions, partitions))
    # More replicas than asked is no risk; fewer is (a lost broker may lose records).
    replicas = {len(partition.replicas) for partition in metadata.partitions.values()}
    wanted = topic.spec.replication_factor
    if wanted is not None and wanted != BROKER_DEFAULT and min(replicas, default=0) < wanted:
        out.append(_mismatch(topic, "replication", wanted, sorted(replicas)))
    return out


def _mismatch(topic: PlannedTopic, problem: Problem, expected: object, actual: object) -> Mismatch:
    return Mismatch(topic.logical, topic.physical, problem, str(expected), str(actual))


def _config_mismatches(
    admin: AdminClient, topics: list[PlannedTopic]
) -> tuple[list[Mismatch], list[str]]:
    with_configs = [topic for topic in topics if topic.spec.configs]
    if not with_configs:
        return [], []
    resources = [ConfigResource(ResourceType.TOPIC, topic.physical) for topic in with_configs]
    futures = admin.describe_configs(resources, request_timeout=ADMIN_TIMEOUT_S)
    mismatches: list[Mismatch] = []
    unchecked: list[str] = []
    for topic, resource in zip(with_configs, resources, strict=True):
        try:
            described = {name: entry.value for name, entry in futures[resource].result().items()}
        except KafkaException:
            described = {}
        for name, expected in topic.spec.configs.items():
            if name not in described:
                unchecked.append(f"{topic.physical}:{name}")
            elif described[name] != expected:
                mismatches.append(_mismatch(topic, "config", f"{name}={expected}", described[name]))
    return mismatches, unchecked
