"""Topic specs: partitions, replication and configs per kind of topic, with sane defaults."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from rmqcompat.errors import ConfigError

_WEEK_MS = 7 * 24 * 3600 * 1000


@dataclass(frozen=True)
class TopicSpec:
    """How one Kafka topic is created: partitions, replication factor and topic configs.

    ``replication_factor=-1`` lets the broker use its default.
    """

    partitions: int = 1
    replication_factor: int = -1
    configs: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.partitions < 1:
            raise ConfigError(f"partitions must be >= 1, not {self.partitions}")
        if self.replication_factor == 0 or self.replication_factor < -1:
            raise ConfigError(
                f"replication_factor must be >= 1 or -1, not {self.replication_factor}"
            )


@dataclass(frozen=True)
class TopologySpec:
    """Specs per kind: business topics, retry topics, DLQs, delay levels, trace, quarantine.

    Defaults: retry and level topics keep a week; DLQs and quarantine keep forever
    (``retention.ms=-1``) so no dead letter expires before an operator looks at it.
    """

    business: TopicSpec = TopicSpec(partitions=4)
    retry: TopicSpec = TopicSpec(partitions=1, configs={"retention.ms": str(_WEEK_MS)})
    dlq: TopicSpec = TopicSpec(partitions=1, configs={"retention.ms": "-1"})
    delay: TopicSpec = TopicSpec(partitions=4, configs={"retention.ms": str(_WEEK_MS)})
    trace: TopicSpec = TopicSpec(partitions=1, configs={"retention.ms": str(_WEEK_MS)})
    quarantine: TopicSpec = TopicSpec(partitions=1, configs={"retention.ms": "-1"})
