"""What the drop-in clients' setters collect; applied when ``start()`` builds the client.

RocketMQ's connection settings map to Kafka as follows:

- ``set_name_server_address("h1:9092;h2:9092")``: the Kafka bootstrap servers (RocketMQ
  separates name servers with ``;``, Kafka with ``,``; both are accepted).
- ``set_session_credentials(access_key, secret_key, channel)``: SASL/PLAIN with
  ``sasl.username=access_key`` and ``sasl.password=secret_key`` over
  ``security.protocol=SASL_SSL`` (PLAIN must not travel unencrypted); ``kafka_config``
  given through :meth:`ClientOptions.set_kafka_config` may choose another mechanism or
  protocol (SCRAM, SASL_PLAINTEXT...). ``channel`` (``ALIYUN``, ``LOCAL``) has no Kafka
  meaning and is kept only for ``repr``.
- ``set_instance_name``: librdkafka's ``client.id`` (and the transactional producer's
  instance, see ``rmqcompat.transaction``).
- ``set_name_server_domain`` (an HTTP address that serves name-server lists): no Kafka
  meaning; accepted and logged.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rmqcompat.config import mask_secrets
from rmqcompat.dropin.message import Text, text

_log = logging.getLogger("rmqcompat.client")


def bootstrap_servers(name_server_address: str) -> str:
    """RocketMQ's ``;``-separated list as Kafka's ``,``-separated one."""
    parts = [part.strip() for part in name_server_address.replace(";", ",").split(",")]
    return ",".join(part for part in parts if part)


@dataclass
class ClientOptions:
    """Connection settings of one drop-in client, as set so far."""

    group: str
    bootstrap_servers: str = ""
    namespace: str = ""
    instance_name: str | None = None
    kafka_config: dict[str, Any] = field(default_factory=dict)
    credentials: dict[str, str] = field(default_factory=dict)
    channel: str = ""
    trace: bool = True

    def set_name_server_address(self, addr: Text) -> None:
        self.bootstrap_servers = bootstrap_servers(text("address", addr))

    def set_name_server_domain(self, domain: Text) -> None:
        _log.info(
            "set_name_server_domain(%r) has no meaning on Kafka; ignored", text("domain", domain)
        )

    def set_session_credentials(self, access_key: Text, secret_key: Text, channel: Text) -> None:
        self.credentials = {
            "sasl.username": text("access_key", access_key),
            "sasl.password": text("secret_key", secret_key),
        }
        self.channel = text("channel", channel)

    def set_kafka_config(self, settings: Mapping[str, Any]) -> None:
        """rmqcompat extension: librdkafka settings passed through (they win over the
        SASL defaults of ``set_session_credentials``)."""
        self.kafka_config = dict(settings)

    def librdkafka(self) -> dict[str, Any]:
        """``kafka_config`` for the native client: SASL from the credentials, the user's
        settings over them, ``client.id`` from the instance name."""
        settings: dict[str, Any] = {}
        if self.credentials:
            settings.update({"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN"})
            settings.update(self.credentials)
        settings.update(self.kafka_config)
        if self.instance_name:
            settings.setdefault("client.id", self.instance_name)
        return settings

    def __repr__(self) -> str:
        return (
            f"ClientOptions(group={self.group!r}, bootstrap_servers={self.bootstrap_servers!r}, "
            f"namespace={self.namespace!r}, channel={self.channel!r}, "
            f"kafka_config={mask_secrets(self.librdkafka())!r})"
        )
