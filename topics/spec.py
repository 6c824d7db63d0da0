"""Topic specs: partitions, replication and configs per kind of topic, with sane defaults."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field

from rmqcompat.errors import ConfigError
from rmqcompat.message import max_record_bytes

_WEEK_MS = 7 * 24 * 3600 * 1000

#: The topic config that caps a record batch (Apache Kafka's default is about 1 MiB).
MAX_MESSAGE_BYTES = "max.message.bytes"
#: The topic config that makes the broker stamp each record with its append time.
TIMESTAMP_TYPE = "message.timestamp.type"
LOG_APPEND_TIME = "LogAppendTime"


#: The topic config: how many replicas must have a write before an ``acks=all`` produce
#: succeeds (fewer in sync: the partition refuses writes rather than risk losing them).
MIN_INSYNC_REPLICAS = "min.insync.replicas"
#: What a replicated internal topic gets: at most 3 replicas, 2 in sync once it has 3.
MAX_REPLICAS = 3
MIN_IN_SYNC = 2
#: ``replication_factor`` values: the broker's ``default.replication.factor``, or
#: rmqcompat's choice at creation (``min(3, brokers)``, :meth:`TopicSpec.on_cluster`).
BROKER_DEFAULT = -1
REPLICATED = None


@dataclass(frozen=True)
class TopicSpec:
    """How one Kafka topic is created: partitions, replication factor and topic configs.

    ``replication_factor``: a number of replicas; ``-1`` (:data:`BROKER_DEFAULT`) lets the
    broker use its default; ``None`` (:data:`REPLICATED`) is decided when the topic is
    created, from the brokers the cluster has then (:meth:`on_cluster`).
    """

    partitions: int = 1
    replication_factor: int | None = BROKER_DEFAULT
    configs: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.partitions < 1:
            raise ConfigError(f"partitions must be >= 1, not {self.partitions}")
        factor = self.replication_factor
        if factor is not None and (factor == 0 or factor < BROKER_DEFAULT):
            raise ConfigError(
                f"replication_factor must be >= 1, -1 (the broker's default) or None "
                f"(auto: min(3, brokers)), not {factor}"
            )

    def on_cluster(self, brokers: int) -> TopicSpec:
        """This spec as created on a cluster of ``brokers`` (live) brokers.

        A :data:`REPLICATED` spec gets ``min(3, brokers)`` replicas and, with 3, a
        ``min.insync.replicas`` of 2 (unless its configs set one): an ``acks=all`` write
        then survives the loss of any one broker, and the topic stays writable while one
        broker is down. Other specs are returned as they are.
        """
        if self.replication_factor is not REPLICATED:
            return self
        if brokers < 1:  # a broker that lists no brokers: leave it to its default
            return dataclasses.replace(self, replication_factor=BROKER_DEFAULT)
        replicas = min(MAX_REPLICAS, brokers)
        configs = dict(self.configs)
        if replicas >= MAX_REPLICAS:
            configs.setdefault(MIN_INSYNC_REPLICAS, str(MIN_IN_SYNC))
        return dataclasses.replace(self, replication_factor=replicas, configs=configs)

    def sized_for(self, max_message_size: int) -> TopicSpec:
        """A copy that accepts bodies of ``max_message_size`` (``max.message.bytes``).

        A ``max.message.bytes`` the spec sets itself is kept: the operator decided.
        """
        if MAX_MESSAGE_BYTES in self.configs:
            return self
        configs = {**self.configs, MAX_MESSAGE_BYTES: str(max_record_bytes(max_message_size))}
        return dataclasses.replace(self, configs=configs)


@dataclass(frozen=True)
class TopologySpec:
    """Specs per kind: business topics, retry topics, DLQs, delay levels, trace, quarantine,
    transaction (the half and op topics of transactional producers), the replay ledger and
    the SimpleConsumer attempt logs, the recalls of timer messages.

    Defaults: every kind but business topics is :data:`REPLICATED` (``min(3, brokers)``
    replicas, 2 in sync with 3: :meth:`TopicSpec.on_cluster`), so a parked, retried,
    dead-lettered, traced or replayed message survives the loss of a broker; business
    topics belong to the application and get the broker's default. Retry and level
    topics keep a week; DLQs and quarantine keep forever
    (``retention.ms=-1``) so no dead letter expires before an operator looks at it.
    Level topics stamp records with the broker's append time
    (``message.timestamp.type=LogAppendTime``): it bounds how far the parker's clock is
    trusted when a parked message falls due (:mod:`rmqcompat.parking`). A level topic
    created without it still works, on the parker's clock alone; ``rmqcompat topics
    verify`` reports it as a config mismatch, and
    ``kafka-configs --alter --add-config message.timestamp.type=LogAppendTime`` fixes it.

    The defaults carry no ``max.message.bytes``: it depends on the clients'
    ``max_message_size``, so every creator applies :meth:`sized_for` with its own.
    """

    business: TopicSpec = TopicSpec(partitions=4)
    retry: TopicSpec = TopicSpec(1, REPLICATED, {"retention.ms": str(_WEEK_MS)})
    dlq: TopicSpec = TopicSpec(1, REPLICATED, {"retention.ms": "-1"})
    delay: TopicSpec = TopicSpec(
        4, REPLICATED, {"retention.ms": str(_WEEK_MS), TIMESTAMP_TYPE: LOG_APPEND_TIME}
    )
    trace: TopicSpec = TopicSpec(1, REPLICATED, {"retention.ms": str(_WEEK_MS)})
    quarantine: TopicSpec = TopicSpec(1, REPLICATED, {"retention.ms": "-1"})
    #: Half messages and their op records (the two must have equal partition counts: the
    #: op records of half partition p live in op partition p).
    transaction: TopicSpec = TopicSpec(1, REPLICATED, {"retention.ms": str(_WEEK_MS)})
    #: The dead-letter replay ledger: one partition (one ordered log), compacted, forever.
    ledger: TopicSpec = TopicSpec(
        1, REPLICATED, {"cleanup.policy": "compact", "retention.ms": "-1"}
    )
    #: A SimpleConsumer group's attempt log (``%ATTEMPT%<group>``): one record per member,
    #: its latest wins (compacted); a member that died keeps its record a week, far
    #: longer than any invisible time (12 h), then it is deleted.
    #: Recalled timer messages (``RMQ_SYS_RECALL_TOPIC``), keyed by message id; a timer
    #: message is due within 3 days at most, so a week outlives every recall.
    recall: TopicSpec = TopicSpec(
        1, REPLICATED, {"cleanup.policy": "compact,delete", "retention.ms": str(_WEEK_MS)}
    )
    attempts: TopicSpec = TopicSpec(
        1, REPLICATED, {"cleanup.policy": "compact,delete", "retention.ms": str(_WEEK_MS)}
    )

    def sized_for(self, max_message_size: int) -> TopologySpec:
        """A copy whose every kind accepts bodies up to ``max_message_size`` bytes.

        Apache Kafka refuses a record above a topic's ``max.message.bytes`` (about 1 MiB by
        default), so without this a 4 MiB body (RocketMQ's default limit) that the producer
        accepts would fail at the next hop: parking, send-back, dead-lettering, quarantine.
        Business topics are sized too when rmqcompat creates them (topology CLI).
        """
        kinds = (f.name for f in dataclasses.fields(self))
        return dataclasses.replace(
            self, **{kind: getattr(self, kind).sized_for(max_message_size) for kind in kinds}
        )
