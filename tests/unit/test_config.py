"""ClientConfig: validation before I/O, passthrough settings, secrets never in repr."""

from __future__ import annotations

from typing import Any

import pytest

from rmqcompat.config import RECONNECT_BACKOFF_MS, ClientConfig, mask_secrets
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


@pytest.mark.parametrize("kind", [None, "consumer", "producer", "admin"])
def test_every_client_connects_after_a_short_backoff_unless_told_otherwise(kind: Any) -> None:
    assert ClientConfig("h:9092").librdkafka(kind)["reconnect.backoff.ms"] == RECONNECT_BACKOFF_MS
    told = ClientConfig("h:9092", kafka_config={"reconnect.backoff.ms": 250})
    assert told.librdkafka(kind)["reconnect.backoff.ms"] == 250
    # librdkafka refuses a backoff above its maximum: a maximum given keeps its default
    bounded = ClientConfig("h:9092", kafka_config={"reconnect.backoff.max.ms": 10})
    assert "reconnect.backoff.ms" not in bounded.librdkafka(kind)


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


@pytest.mark.parametrize("table", ["", "1s 1x", "junk"])
def test_bad_delay_table_raises_config_error(table: str) -> None:
    with pytest.raises(ConfigError):
        ClientConfig("h:9092", message_delay_level=table)


def test_custom_delay_table_is_parsed() -> None:
    assert ClientConfig("h:9092", message_delay_level="100ms 1s").levels.durations_ms == (100, 1000)


def test_each_kind_of_client_gets_only_the_passthrough_settings_it_reads() -> None:
    config = ClientConfig(
        "b:9092",
        kafka_config={
            "session.timeout.ms": 6000,
            "linger.ms": 20,
            "security.protocol": "SASL_SSL",
        },
    )

    consumer = config.librdkafka("consumer")
    producer = config.librdkafka("producer", acks="all")
    admin = config.librdkafka("admin")

    assert consumer["session.timeout.ms"] == 6000 and "linger.ms" not in consumer
    assert producer["linger.ms"] == 20 and "session.timeout.ms" not in producer
    assert producer["acks"] == "all"
    assert "linger.ms" not in admin and "session.timeout.ms" not in admin
    for settings in (consumer, producer, admin):
        assert settings["security.protocol"] == "SASL_SSL"
        assert settings["bootstrap.servers"] == "b:9092"


def test_confluent_clients_accept_the_filtered_settings_without_warnings() -> None:
    import logging

    from confluent_kafka import Consumer, Producer

    config = ClientConfig(
        "127.0.0.1:1",
        kafka_config={"session.timeout.ms": 6000, "linger.ms": 20, "group.id": "g"},
    )
    records: list[logging.LogRecord] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logger = logging.getLogger("test-kafka-settings")
    logger.addHandler(Collect())
    Producer({**config.librdkafka("producer"), "logger": logger}).flush(0)
    Consumer({**config.librdkafka("consumer"), "logger": logger}).close()

    assert not [r for r in records if "CONFWARN" in r.getMessage()]


def test_producers_fit_every_admitted_body_unless_the_operator_set_message_max_bytes() -> None:
    from rmqcompat.message import max_record_bytes

    sized = ClientConfig("b:9092", max_message_size=6 << 20)
    assert sized.librdkafka("producer")["message.max.bytes"] == max_record_bytes(6 << 20)
    assert "message.max.bytes" not in sized.librdkafka("consumer")
    assert "message.max.bytes" not in sized.librdkafka("admin")
    chosen = ClientConfig("b:9092", kafka_config={"message.max.bytes": 2_000_000})
    assert chosen.librdkafka("producer")["message.max.bytes"] == 2_000_000
