"""The compiled core as a librdkafka plugin (``native/src/rdkafka.rs``): the settings that
let the core find a client's librdkafka handle, for the direct fetch of a push consumer
(:mod:`rmqcompat.consumer.fetcher`) and the direct produce of a replay
(:mod:`rmqcompat.dlq.transactions`).

librdkafka loads the plugins named in ``plugin.library.paths`` before it applies the
other properties, and a plugin takes the properties librdkafka does not know: the core
takes :data:`TOKEN_PROPERTY` and notes the client's handle under it when the client is
created, until it is destroyed.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

import confluent_kafka  # noqa: F401 - loads librdkafka, which the core then finds

from rmqcompat.core import CORE

if TYPE_CHECKING:
    from rmqcompat._core import DirectFetch, DirectProduce

#: The client property the core's plugin takes to know the client again
#: (``TOKEN_PROPERTY`` in ``native/src/rdkafka.rs``).
TOKEN_PROPERTY = "rmqcompat.token"  # noqa: S105 - a property name, no secret
PLUGIN_PROPERTY = "plugin.library.paths"


def plugin_config(kafka_config: dict[str, Any]) -> dict[str, Any]:
    """The settings that load the core as a plugin of a client created with
    ``kafka_config``, to be placed before all others (librdkafka loads the plugin, which
    then takes the token); none where the core is not active or the user loads plugins of
    their own."""
    if CORE is None or PLUGIN_PROPERTY in kafka_config or not CORE.plugin_available():
        return {}
    return {PLUGIN_PROPERTY: CORE.__file__, TOKEN_PROPERTY: uuid.uuid4().hex}


def with_plugin(kafka_config: dict[str, Any]) -> dict[str, Any]:
    """``kafka_config`` after :func:`plugin_config`'s settings."""
    return {**plugin_config(kafka_config), **kafka_config}


def plugin_token(kafka_config: dict[str, Any]) -> str | None:
    """The token a client created with ``kafka_config`` is known by to the core, if any."""
    token = kafka_config.get(TOKEN_PROPERTY)
    return token if CORE is not None and isinstance(token, str) else None


def direct_fetch(kafka_config: dict[str, Any]) -> DirectFetch | None:
    """The core's direct fetch of the consumer created with ``kafka_config``, if it took
    the consumer as a plugin."""
    token = plugin_token(kafka_config)
    return None if CORE is None or token is None else CORE.DirectFetch.of(token)


def direct_produce(kafka_config: dict[str, Any]) -> DirectProduce | None:
    """The core's direct produce of the producer created with ``kafka_config``, if it took
    the producer as a plugin."""
    token = plugin_token(kafka_config)
    return None if CORE is None or token is None else CORE.DirectProduce.of(token)
