"""ClientConfig: validation before I/O, passthrough settings, secrets never in repr."""

from __future__ import annotations

from typing import Any

import pytest

from rmqcompat.config import ClientConfig, mask_secrets
from rmqcompat.errors import ConfigError, InvalidNameError

SECRETS = {
    "sasl.password": "hunter2-sasl",
    "ssl.key.password": "hunter2-keypw",
    "ssl.keystore.password": "hunter2-keystore",
    "ssl.key.pem": "hunter2-pem",
    "sasl.oauthbearer.client.secret": "hunter2-oauth",
    "sasl.oauthbearer.config": "principal=x secret=hunter2-cfg",
}


def test_repr_and_str_mask_every_secret() -> None:
    config = ClientConfig("h:9092", kafka_config={**SECRETS, "sasl.username": "alice"})
    for text in (repr(config), str(config)):
        assert "hunter2" not in text
        assert "alice" in text and "h:9092" in text


def test_secrets_stay_usable_for_the_client() -> None:
    config = ClientConfig("h:9092", kafka_config=SECRETS)
    assert config.librdkafka()["sasl.password"] == "hunter2-sasl"


def test_mask_secrets_keeps_non_secrets() -> None:
    masked = mask_secrets({"sasl.password": "p", "acks": "all"})
    assert masked == {"sasl.password": "***", "acks": "all"}


def test_explicit_settings_win_over_passthrough() -> None:
    config = ClientConfig("h:9092", kafka_config={"acks": "1", "bootstrap.servers": "evil:1"})
    settings = config.librdkafka(acks="all")
    assert settings["acks"] == "all"
    assert settings["bootstrap.servers"] == "h:9092"


def test_passthrough_is_copied() -> None:
    extra = {"acks": "1"}
    config = ClientConfig("h:9092", kafka_config=extra)
    extra["acks"] = "0"
    assert config.librdkafka()["acks"] == "1"


def test_defaults() -> None:
    config = ClientConfig("h:9092")
    assert config.namespace == ""
    assert config.max_message_size == 4 * 1024 * 1024
    assert config.levels.max_level == 18


@pytest.mark.parametrize("bootstrap", ["", None, 9092, "   "])
def test_bad_bootstrap_servers_raise_config_error(bootstrap: Any) -> None:
    with pytest.raises(ConfigError, match="bootstrap_servers"):
        ClientConfig(bootstrap)


@pytest.mark.parametrize("namespace", ["a.b", "rmq", "a%b", "n" * 65])
def test_bad_namespace_raises_invalid_name(namespace: str) -> None:
    with pytest.raises(InvalidNameError, match="namespace"):
        ClientConfig("h:9092", namespace=namespace)


@pytest.mark.parametrize("size", [0, -1])
def test_bad_max_message_size_raises_config_error(size: int) -> None:
    with pytest.raises(ConfigError, match="max_message_size"):
        ClientConfig("h:9092", max_message_size=size)


@pytest.mark.parametrize("table", ["", "1s 1s", "junk"])
def test_bad_delay_table_raises_config_error(table: str) -> None:
    with pytest.raises(ConfigError):
        ClientConfig("h:9092", message_delay_level=table)


def test_custom_delay_table_is_parsed() -> None:
    assert ClientConfig("h:9092", message_delay_level="100ms 1s").levels.durations_ms == (100, 1000)
