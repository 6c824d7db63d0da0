"""Per-producer topic knowledge: logical -> physical names, existence, level topics.

Each piece of I/O here happens once per topic per producer, never per send.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from confluent_kafka import KafkaError, KafkaException, Producer

from rmqcompat.config import ClientConfig
from rmqcompat.topics.naming import to_kafka_topic
from rmqcompat.topics.provision import ensure_topics
from rmqcompat.topics.spec import TopicSpec

if TYPE_CHECKING:
    from confluent_kafka.admin import ClusterMetadata

log = logging.getLogger(__name__)


class TopicGuard:
    """Caches physical names, which business topics exist, and which level topics exist.

    Business topics are not created here: whether a missing one appears is the broker's
    policy (``auto.create.topics.enable`` with librdkafka's ``allow.auto.create.topics``),
    as for any Kafka producer. Delay-level topics are rmqcompat's own and are created.
    """

    def __init__(
        self,
        config: ClientConfig,
        level_specs: Mapping[str, TopicSpec],
        metadata_timeout_s: float,
    ) -> None:
        self._config = config
        self._level_specs = level_specs  # logical level topic -> spec (the topology's)
        self._timeout_s = metadata_timeout_s
        self._known: set[str] = set()
        self._levels: set[int] = set()
        self._lock = threading.Lock()

    def physical(self, logical: str) -> str:
        """Physical name of ``logical`` (raises InvalidNameError, no I/O)."""
        return to_kafka_topic(logical, self._config.namespace)

    def missing(
        self, producer: Producer, physical: str, deadline: float | None = None
    ) -> KafkaError | None:
        """``UNKNOWN_TOPIC_OR_PART`` if the broker says ``physical`` does not exist.

        Blocks on a metadata request the first time a topic is seen, at most until
        ``deadline`` (``time.monotonic()``; None: ``metadata_timeout_s``). If the broker
        cannot be asked (down, timed out, no time left), the topic is not checked again:
        blocking every send of an outage on metadata would stall the caller, and those
        sends run into the usual retriable errors (retries, then the spool) anyway.
        """
        if physical in self._known:
            return None
        try:
            # The stub says Any; librdkafka's producer returns the admin ClusterMetadata.
            topic: ClusterMetadata = producer.list_topics(physical, timeout=self._wait_s(deadline))
        except (KafkaException, _NoTimeLeft) as exc:
            log.warning("metadata for topic %s unavailable: %s", physical, exc)
            self._known.add(physical)
            return None
        found = topic.topics.get(physical)
        if found is not None and found.error is not None:
            if found.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
                return found.error
            return None
        self._known.add(physical)
        return None

    def ensure_level(self, level: int, producer: Producer, deadline: float | None = None) -> None:
        """Create the topic of delay ``level`` if missing (once per producer).

        Asks the broker first, within ``deadline`` as :meth:`missing`; creating the topic
        is left for a later send if the broker does not answer in that time.

        Raises:
            TopologyError: the broker refused to create it.
        """
        if level in self._levels:
            return
        with self._lock:
            if level in self._levels:
                return
            topic = self._config.levels.topic(level)
            try:
                # All topics: naming one could auto-create it with the broker's defaults.
                existing = producer.list_topics(timeout=self._wait_s(deadline)).topics
                if self.physical(topic) not in existing:
                    admin = self._config.librdkafka("admin")
                    ensure_topics(admin, {topic: self._level_specs[topic]}, self._config.namespace)
            except (KafkaException, _NoTimeLeft) as exc:
                # Broker unreachable: produce anyway (retries/spool apply) and try again later.
                log.warning("could not verify delay topic %s: %s", topic, exc)
                return
            self._levels.add(level)

    def _wait_s(self, deadline: float | None) -> float:
        if deadline is None:
            return self._timeout_s
        left = deadline - time.monotonic()
        if left <= 0:
            raise _NoTimeLeft("the send's send_msg_timeout is spent")
        return left


class _NoTimeLeft(Exception):
    """A sync send has no time left to ask the broker anything."""
