"""The check every client's ``start()`` makes first: settings accepted, a broker answers.

It runs before a client creates anything (topics, threads, a metrics server), so a
start that fails leaves nothing behind and fails in bounded time with a typed error.
"""

from __future__ import annotations

from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, ClusterMetadata

from rmqcompat.config import ClientConfig
from rmqcompat.errors import BrokerUnreachableError, ConfigError

#: The one topic a metadata request names when it needs only an answer: a space is not a
#: legal character in a Kafka topic name, so every broker answers with its brokers and an
#: "invalid topic" error for it, and none creates it (a producer's metadata request may
#: auto-create what it names). Naming no real topic keeps the answer small: asking for
#: every topic took 45 ms a request on a broker holding 3,000 topics, this 2 ms (Apache
#: Kafka 4.1.1 and Tansu answer alike).
PROBE_TOPIC = "rmqcompat probe"


def require_broker(config: ClientConfig, timeout_s: float | None = None) -> None:
    """Return once a broker of ``config`` answered a metadata request for
    :data:`PROBE_TOPIC` only: a start needs an answer, not the topic list.

    The probe is built from every ``kafka_config`` setting (whichever client kind reads
    it), so a misspelt name or a malformed value is refused here, before any I/O.

    Args:
        config: the client's settings.
        timeout_s: the bound; default ``config.start_timeout_s``.

    Raises:
        ConfigError: librdkafka refused a setting.
        BrokerUnreachableError: no broker answered within the bound (it took that long).
    """
    _ask(config, timeout_s, PROBE_TOPIC)


def cluster_metadata(config: ClientConfig, timeout_s: float | None = None) -> ClusterMetadata:
    """The cluster's metadata, every topic listed, checked and bounded as
    :func:`require_broker` (which it raises as)."""
    return _ask(config, timeout_s, None)


def _ask(config: ClientConfig, timeout_s: float | None, topic: str | None) -> ClusterMetadata:
    bound_s = config.start_timeout_s if timeout_s is None else timeout_s
    settings: dict[str, Any] = config.librdkafka()
    # Connection errors are reported once, below; librdkafka's own log lines (and its
    # notes on settings only another client kind reads) would repeat them.
    settings["log_level"] = 0
    try:
        probe = AdminClient(settings)
    except (KafkaException, TypeError, ValueError) as exc:
        raise ConfigError(f"librdkafka refused the settings: {_reason(exc)}") from exc
    try:
        return probe.list_topics(topic, timeout=bound_s)
    except KafkaException as exc:
        raise BrokerUnreachableError(
            f"no broker at {config.bootstrap_servers} answered within {bound_s:g} s "
            f"({_reason(exc)})"
        ) from exc


def _reason(exc: Exception) -> str:
    error = exc.args[0] if exc.args else None
    return error.str() if isinstance(error, KafkaError) else str(exc)
