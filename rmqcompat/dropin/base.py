"""Setters that every drop-in client has; they take effect at ``start()``."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Self

from rmqcompat.dropin.message import Text, text
from rmqcompat.dropin.options import ClientOptions

_log = logging.getLogger("rmqcompat.client")


class ClientBase:
    """Collects settings in :class:`ClientOptions`; the native client is built from them
    by ``start()``. A setting given after ``start()`` is logged and applies only to a
    client started later (as the C client reads most of them only at start)."""

    def __init__(self, group_id: Text) -> None:
        self._options = ClientOptions(text("group_id", group_id))
        self._started = False

    def __enter__(self) -> Self:
        """Starts the client. Upstream's ``__enter__`` returns None; this returns the
        client, so ``with Producer(...) as producer`` works too."""
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.shutdown()

    def start(self) -> None:
        raise NotImplementedError

    def shutdown(self) -> None:
        raise NotImplementedError

    def _setting(self, name: str) -> None:
        if self._started:
            _log.warning("%s after start() does not change the running client", name)

    def set_group(self, group_name: Text) -> None:
        self._setting("set_group")
        self._options.group = text("group", group_name)

    def set_instance_name(self, name: Text) -> None:
        self._setting("set_instance_name")
        self._options.instance_name = text("instance name", name)

    def set_name_server_address(self, addr: Text) -> None:
        """Kafka bootstrap servers (``host:port``, separated by ``;`` or ``,``)."""
        self._setting("set_name_server_address")
        self._options.set_name_server_address(addr)

    def set_name_server_domain(self, domain: Text) -> None:
        """No Kafka meaning: accepted and logged."""
        self._options.set_name_server_domain(domain)

    def set_session_credentials(self, access_key: Text, access_secret: Text, channel: Text) -> None:
        """SASL/PLAIN (``SASL_SSL``) with these credentials; see :mod:`.options`."""
        self._setting("set_session_credentials")
        self._options.set_session_credentials(access_key, access_secret, channel)

    def set_message_trace(self, message_trace: bool) -> None:
        """RocketMQ's message-trace switch: trace events of this client go to the
        namespace's trace topic (on unless switched off here, before ``start``)."""
        self._setting("set_message_trace")
        self._options.trace = bool(message_trace)

    def set_namespace(self, namespace: str) -> None:
        """rmqcompat extension: prefix every Kafka topic (see the README's naming)."""
        self._setting("set_namespace")
        self._options.namespace = namespace

    def set_kafka_config(self, settings: Mapping[str, Any]) -> None:
        """rmqcompat extension: librdkafka settings passed through (SSL, SASL...)."""
        self._setting("set_kafka_config")
        self._options.set_kafka_config(settings)
