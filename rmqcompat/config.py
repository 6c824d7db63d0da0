"""Typed, validated client settings shared by producers, consumers and the forwarder."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rmqcompat.errors import ConfigError
from rmqcompat.kafka_settings import ClientKind, for_client
from rmqcompat.message import DEFAULT_MAX_MESSAGE_SIZE, max_record_bytes
from rmqcompat.topics.delay_levels import DEFAULT_MESSAGE_DELAY_LEVEL, DelayLevels
from rmqcompat.topics.naming import validate_namespace

#: How long ``start()`` of a consumer or forwarder waits for a broker to answer (the
#: producer waits its ``send_msg_timeout``).
DEFAULT_START_TIMEOUT_S = 10.0

#: librdkafka's initial reconnect backoff (its default: 100 ms). It also spaces out the
#: connections a client opens on its own: a new client connects to the bootstrap address,
#: learns the brokers' ids and then waits about half this backoff before it connects to
#: the broker it needs, so with the default every client's first request took some 55 ms
#: longer on a local broker (14 ms with 20). Reconnects after a failure start from it and
#: double up to ``reconnect.backoff.max.ms`` as before. Either value passed in
#: ``kafka_config`` leaves this default out.
RECONNECT_BACKOFF_MS = 20

_SECRET_MARKERS = ("password", "secret", "key.pem", "keystore", "sasl.oauthbearer.config")


def mask_secrets(settings: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of librdkafka settings with every secret value replaced by ``***``."""
    return {
        name: "***" if any(marker in name for marker in _SECRET_MARKERS) else value
        for name, value in settings.items()
    }


@dataclass(frozen=True)
class ClientConfig:
    """Connection and topology settings common to every rmqcompat client.

    Args:
        bootstrap_servers: Kafka bootstrap list (``host:port,...``).
        namespace: isolates every topic of a deployment (see the README's naming table).
        message_delay_level: RocketMQ's delay table, e.g. ``"1s 5s 10s ..."``.
        kafka_config: librdkafka settings passed through (SASL, SSL, timeouts, ...);
            rmqcompat's explicit settings win over them. Secrets never appear in ``repr``.
        max_message_size: largest body accepted, in bytes (RocketMQ default 4 MiB).
        start_timeout_s: how long ``start()`` waits for a broker to answer before it
            raises ``BrokerUnreachableError``.

    Raises:
        ConfigError: a setting is invalid (checked here, before any I/O).
    """

    bootstrap_servers: str
    namespace: str = ""
    message_delay_level: str = DEFAULT_MESSAGE_DELAY_LEVEL
    kafka_config: Mapping[str, Any] = field(default_factory=dict)
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    start_timeout_s: float = DEFAULT_START_TIMEOUT_S
    levels: DelayLevels = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.bootstrap_servers, str) or not self.bootstrap_servers.strip():
            raise ConfigError("bootstrap_servers must be a non-empty 'host:port[,...]' string")
        validate_namespace(self.namespace)
        if self.max_message_size <= 0:
            raise ConfigError(f"max_message_size must be > 0, not {self.max_message_size}")
        if not self.start_timeout_s > 0:
            raise ConfigError(f"start_timeout_s must be > 0, not {self.start_timeout_s}")
        object.__setattr__(self, "kafka_config", dict(self.kafka_config))
        object.__setattr__(self, "levels", DelayLevels.parse(self.message_delay_level))

    def librdkafka(self, kind: ClientKind | None = None, **explicit: Any) -> dict[str, Any]:
        """Settings for a confluent-kafka client: passthrough first, explicit ones win.

        With ``kind``, passthrough settings that only another kind of client reads are
        left out, so one ``kafka_config`` serves every client without librdkafka warnings.
        """
        settings = dict(self.kafka_config) if kind is None else for_client(self.kafka_config, kind)
        settings.update(explicit)
        if "reconnect.backoff.max.ms" not in settings:  # librdkafka wants backoff <= max
            settings.setdefault("reconnect.backoff.ms", RECONNECT_BACKOFF_MS)
        if kind == "producer":
            # Every body max_message_size admits must fit a record, or it could be accepted
            # but never retried or dead-lettered; a value the operator passed is kept.
            settings.setdefault("message.max.bytes", max_record_bytes(self.max_message_size))
        settings["bootstrap.servers"] = self.bootstrap_servers
        return settings

    def __repr__(self) -> str:
        return (
            f"ClientConfig(bootstrap_servers={self.bootstrap_servers!r}, "
            f"namespace={self.namespace!r}, message_delay_level={self.message_delay_level!r}, "
            f"kafka_config={mask_secrets(self.kafka_config)!r}, "
            f"max_message_size={self.max_message_size})"
        )
