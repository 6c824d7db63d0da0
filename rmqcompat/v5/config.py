"""``ClientConfiguration`` and ``Credentials``: where a 5.x client connects, on Kafka.

``endpoints`` are Kafka bootstrap servers, written as RocketMQ 5 writes proxy endpoints
(``"host:port;host:port"``, an ``http://`` prefix allowed). Credentials become SASL/PLAIN
over SSL, as the 4.x drop-in's ``set_session_credentials`` does; ``kafka_config``
(rmqcompat extension) passes librdkafka settings through and wins over them. The
namespace isolates topics and groups as everywhere in rmqcompat. ``request_timeout``
(seconds) bounds sends and a producer's ``startup``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rmqcompat.config import ClientConfig, mask_secrets
from rmqcompat.errors import RmqCompatError
from rmqcompat.topics.delay_levels import DEFAULT_MESSAGE_DELAY_LEVEL
from rmqcompat.v5.exceptions import IllegalArgumentException


class Credentials:
    """An access key and secret key (empty: no authentication)."""

    def __init__(self, ak: str = "", sk: str = "") -> None:
        self._ak = ak if ak is not None else ""
        self._sk = sk if sk is not None else ""

    @property
    def ak(self) -> str:
        return self._ak

    @property
    def sk(self) -> str:
        return self._sk

    def __repr__(self) -> str:
        return f"Credentials(ak={self._ak!r}, sk='***')"


class ClientConfiguration:
    """``ClientConfiguration(endpoints, credentials, namespace="", request_timeout=3)``.

    rmqcompat extensions (keyword only): ``kafka_config`` (librdkafka settings) and
    ``message_delay_level`` (the delay table the retry path parks on; tests shorten it).

    Raises:
        IllegalArgumentException: no endpoint, a bad namespace or timeout (no I/O).
    """

    def __init__(
        self,
        endpoints: str,
        credentials: Credentials | None = None,
        namespace: str = "",
        request_timeout: int = 3,
        *,
        kafka_config: Mapping[str, Any] | None = None,
        message_delay_level: str = DEFAULT_MESSAGE_DELAY_LEVEL,
    ) -> None:
        if not isinstance(request_timeout, int) or isinstance(request_timeout, bool):
            raise IllegalArgumentException("request_timeout must be whole seconds (an int)")
        if request_timeout <= 0:
            raise IllegalArgumentException("request_timeout must be greater than 0")
        self._credentials = credentials or Credentials()
        self._namespace = namespace or ""
        self._request_timeout = request_timeout
        settings: dict[str, Any] = {}
        if self._credentials.ak:
            settings = {
                "security.protocol": "SASL_SSL",
                "sasl.mechanism": "PLAIN",
                "sasl.username": self._credentials.ak,
                "sasl.password": self._credentials.sk,
            }
        settings.update(kafka_config or {})
        try:
            self.client = ClientConfig(
                _bootstrap(endpoints),
                self._namespace,
                message_delay_level,
                settings,
                start_timeout_s=float(request_timeout),
            )
        except RmqCompatError as exc:
            raise IllegalArgumentException(str(exc)) from exc

    def core_settings(self) -> dict[str, Any]:
        """Keyword arguments every core client takes from this configuration."""
        client = self.client
        return {
            "namespace": client.namespace,
            "message_delay_level": client.message_delay_level,
            "kafka_config": client.kafka_config,
        }

    @property
    def namespace(self) -> str:
        return self._namespace

    @property
    def credentials(self) -> Credentials:
        return self._credentials

    @property
    def request_timeout(self) -> int:
        return self._request_timeout

    def __repr__(self) -> str:
        return (
            f"ClientConfiguration(endpoints={self.client.bootstrap_servers!r}, "
            f"namespace={self._namespace!r}, request_timeout={self._request_timeout}, "
            f"kafka_config={mask_secrets(self.client.kafka_config)!r})"
        )


def _bootstrap(endpoints: object) -> str:
    """RocketMQ 5 endpoint text as a Kafka bootstrap list."""
    if not isinstance(endpoints, str):
        raise IllegalArgumentException("endpoints must be a 'host:port[;host:port]' string")
    hosts = []
    for address in endpoints.split(";"):
        address = address.strip().removeprefix("http://").removeprefix("https://")
        if address:
            hosts.append(address)
    if not hosts:
        raise IllegalArgumentException("endpoints has no address")
    return ",".join(hosts)
