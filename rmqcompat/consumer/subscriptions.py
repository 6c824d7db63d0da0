"""The topics a consumer reads, with their tag filters, logical and physical."""

from __future__ import annotations

from dataclasses import dataclass, field

from rmqcompat.consumer.tag_filter import TagFilter
from rmqcompat.topics.naming import from_kafka_topic, retry_topic, to_kafka_topic, validate_topic


@dataclass
class Subscriptions:
    """Logical topic -> filter; physical names are computed once (raises before any I/O).

    ``own_retry`` is the group's ``%RETRY%`` topic (subscribed with ``*`` in CLUSTERING).
    """

    group: str
    namespace: str
    filters: dict[str, TagFilter] = field(default_factory=dict)
    _physical: dict[str, TagFilter] = field(default_factory=dict)

    def add(self, topic: str, expression: str | None = "*") -> None:
        """Raises InvalidNameError for a bad topic name."""
        tag_filter = TagFilter.parse(expression)
        self._physical[to_kafka_topic(validate_topic(topic), self.namespace)] = tag_filter
        self.filters[topic] = tag_filter

    def add_own_retry(self) -> None:
        self.add(self.own_retry)

    @property
    def own_retry(self) -> str:
        return retry_topic(self.group)

    @property
    def own_retry_physical(self) -> str:
        return to_kafka_topic(self.own_retry, self.namespace)

    def physical_topics(self) -> list[str]:
        return list(self._physical)

    def logical(self, physical: str) -> str:
        return from_kafka_topic(physical)[1]

    def filter_of(self, physical: str) -> TagFilter | None:
        """The tag filter of a physical topic; None for a topic not subscribed by name."""
        return self._physical.get(physical)

    def matches(self, physical: str, tag: str | None) -> bool:
        tag_filter = self._physical.get(physical)
        return tag_filter is None or tag_filter.matches(tag)
