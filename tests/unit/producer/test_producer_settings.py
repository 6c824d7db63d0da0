"""Producer settings, lifecycle and input checks: all before any I/O."""

from __future__ import annotations

import pytest

from rmqcompat.errors import (
    ClientStateError,
    ConfigError,
    InvalidNameError,
    MessageTooLargeError,
)
from rmqcompat.message import Message, max_record_bytes
from rmqcompat.producer import DefaultMQProducer

# Nothing listens here; none of these tests may reach the network.
NOWHERE = "127.0.0.1:1"


def producer(**kwargs: object) -> DefaultMQProducer:
    kwargs.setdefault("kafka_config", {"log_level": 0})
    kwargs.setdefault("connect_on_start", False)  # settings only: no broker here
    return DefaultMQProducer("PG", NOWHERE, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"retry_times_when_send_failed": -1}, ConfigError),
        ({"retry_times_when_send_async_failed": -1}, ConfigError),
        ({"send_msg_timeout": 0}, ConfigError),
        ({"spool_resend_interval_s": 0}, ConfigError),
        ({"max_message_size": 0}, ConfigError),
        ({"message_delay_level": "1s 5x"}, ConfigError),
        ({"namespace": "bad.ns"}, InvalidNameError),
    ],
)
def test_invalid_settings_raise_typed_errors_in_the_constructor(kwargs, error):
    with pytest.raises(error):
        producer(**kwargs)


def test_invalid_group_name_is_refused():
    with pytest.raises(InvalidNameError):
        DefaultMQProducer("bad group", NOWHERE)


def test_librdkafka_settings_defaults_passthrough_and_derived_values():
    settings = producer(
        send_msg_timeout=4500,
        kafka_config={"linger.ms": 20, "message.timeout.ms": 1, "sasl.password": "hunter2"},
    ).settings.librdkafka()
    assert settings["enable.idempotence"] is True
    assert settings["acks"] == "all"
    assert settings["linger.ms"] == 20  # passthrough overrides a default
    assert settings["message.timeout.ms"] == 4500  # derived from send_msg_timeout, wins
    assert settings["message.max.bytes"] == max_record_bytes(4 * 1024 * 1024)
    assert settings["bootstrap.servers"] == NOWHERE
    assert settings["sasl.password"] == "hunter2"


def test_repr_never_shows_secrets():
    text = repr(producer(kafka_config={"sasl.password": "hunter2", "ssl.key.password": "pw"}))
    assert "hunter2" not in text
    assert "'pw'" not in text
    assert "***" in text


def test_use_before_start_and_after_shutdown_raises_client_state_error():
    p = producer()
    with pytest.raises(ClientStateError):
        p.send(Message("T", b"x"))
    with pytest.raises(ClientStateError):
        p.send_async(Message("T", b"x"))
    with pytest.raises(ClientStateError):
        p.resend_spooled()
    p.start()
    with pytest.raises(ClientStateError):
        p.start()
    p.shutdown()
    p.shutdown()  # idempotent
    with pytest.raises(ClientStateError):
        p.send_oneway(Message("T", b"x"))
    with pytest.raises(ClientStateError):
        p.start()


def test_librdkafka_refusing_settings_is_a_config_error_at_start():
    with pytest.raises(ConfigError, match="librdkafka"):
        producer(kafka_config={"no.such.setting": "1"}).start()


def test_oversized_body_and_unmappable_topic_fail_before_any_io():
    with producer(max_message_size=10) as p:
        with pytest.raises(MessageTooLargeError):
            p.send(Message("T", b"x" * 11))
        with pytest.raises(MessageTooLargeError):
            p.send_async(Message("T", b"x" * 11))
        # 127 escaped '%' -> a Kafka name longer than 249 characters
        with pytest.raises(InvalidNameError):
            p.send(Message("%" * 127, b"x"))


def test_orderly_send_needs_a_sharding_key():
    with producer() as p, pytest.raises(ConfigError):
        p.send_orderly(Message("T", b"x"), "")


def test_resend_without_spool_dir_is_a_config_error():
    with producer() as p, pytest.raises(ConfigError):
        p.resend_spooled()
