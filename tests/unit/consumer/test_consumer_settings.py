from datetime import timedelta

import pytest

from rmqcompat.config import ClientConfig
from rmqcompat.consumer.flow_control import over_threshold
from rmqcompat.consumer.push_consumer import DefaultMQPushConsumer
from rmqcompat.consumer.settings import ConsumerSettings
from rmqcompat.consumer.wiring import consumer_config
from rmqcompat.errors import ClientStateError, ConfigError, InvalidNameError
from rmqcompat.process_queue import ProcessQueue

CLIENT = ClientConfig("127.0.0.1:1")


def test_rocketmq_defaults():
    s = ConsumerSettings("g", CLIENT)
    assert s.consume_message_batch_max_size == 1
    assert s.consume_thread_max == 20
    assert s.max_reconsume_times == -1  # as RocketMQ's field: concurrent reads it as 16
    assert s.retry_policy().max_reconsume_times == 16
    assert s.consume_timeout_s == 15 * 60
    assert s.pull_threshold_for_queue == 1000
    assert s.threshold_size_bytes == 100 * 1024 * 1024
    assert s.consume_concurrently_max_span == 2000
    assert s.persist_consumer_offset_interval == 5


def test_consume_timeout_accepts_timedelta():
    assert (
        ConsumerSettings("g", CLIENT, consume_timeout=timedelta(seconds=2)).consume_timeout_s == 2
    )


@pytest.mark.parametrize(
    "bad",
    [
        {"consume_message_batch_max_size": 0},
        {"consume_thread_max": 0},
        {"max_reconsume_times": -2},
        {"consume_timeout": 0},
        {"pull_threshold_for_queue": 0},
        {"pull_threshold_size_for_queue": 0},
        {"consume_concurrently_max_span": 0},
        {"persist_consumer_offset_interval": 0},
    ],
)
def test_invalid_settings_raise_config_error(bad):
    with pytest.raises(ConfigError):
        ConsumerSettings("g", CLIENT, **bad)


def test_constructor_validates_before_io():
    with pytest.raises(InvalidNameError):
        DefaultMQPushConsumer("bad group!", bootstrap_servers="127.0.0.1:1")
    consumer = DefaultMQPushConsumer("g", bootstrap_servers="127.0.0.1:1")
    with pytest.raises(InvalidNameError):
        consumer.subscribe("bad topic")
    with pytest.raises(ClientStateError):
        consumer.start()  # no listener, no subscription: refused before any I/O
    with pytest.raises(TypeError):
        consumer.register_message_listener(42)


def test_flow_control_thresholds():
    s = ConsumerSettings(
        "g",
        CLIENT,
        pull_threshold_for_queue=2,
        pull_threshold_size_for_queue=100 / (1024 * 1024),
        consume_concurrently_max_span=10,
    )
    pq = ProcessQueue()
    pq.add(0, 1)
    pq.add(1, 1)
    assert over_threshold(pq, s, orderly=False) is None  # not more than 2
    pq.add(2, 1)
    assert "pull_threshold_for_queue" in over_threshold(pq, s, orderly=False)
    assert "pull_threshold_for_queue" in over_threshold(pq, s, orderly=True)
    big = ProcessQueue()
    big.add(0, 101)
    assert "size" in over_threshold(big, s, orderly=False)
    assert "size" in over_threshold(big, s, orderly=True)
    wide = ProcessQueue()
    wide.add(0, 1)
    wide.add(11, 1)
    assert "span" in over_threshold(wide, s, orderly=False)


def test_the_span_rule_holds_back_concurrent_consumption_only():
    """RocketMQ's pullMessage checks consumeConcurrentlyMaxSpan only when not orderly."""
    s = ConsumerSettings("g", CLIENT, consume_concurrently_max_span=10)
    wide = ProcessQueue()
    wide.add(0, 1)
    wide.add(11, 1)
    assert over_threshold(wide, s, orderly=True) is None


def test_group_longer_than_120_characters_is_refused_with_the_retry_topic_rule():
    # %RETRY%<group> is a topic, and topics have at most 127 characters (RocketMQ too)
    ConsumerSettings("g" * 120, CLIENT)
    with pytest.raises(InvalidNameError, match=r"at most 120 .*%RETRY%<group>.*127"):
        ConsumerSettings("g" * 121, CLIENT)
    with pytest.raises(InvalidNameError):
        DefaultMQPushConsumer("g" * 255, bootstrap_servers="127.0.0.1:1")


def test_push_consumer_takes_every_setting_as_an_explicit_keyword() -> None:
    """The constructor names each setting (no ``**settings``), with the settings' defaults."""
    import dataclasses
    import inspect

    from rmqcompat.consumer import DefaultMQPushConsumer

    params = inspect.signature(DefaultMQPushConsumer.__init__).parameters
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    fields = {f.name: f for f in dataclasses.fields(ConsumerSettings)}
    for name, field in fields.items():
        if name in ("group", "client"):
            continue
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY, name
        assert params[name].default == field.default, name


def test_push_consumer_refuses_an_unknown_setting_before_any_io() -> None:
    from rmqcompat.consumer import DefaultMQPushConsumer

    with pytest.raises(TypeError, match="consume_thread_maximum"):
        DefaultMQPushConsumer("g", "127.0.0.1:1", consume_thread_maximum=3)  # type: ignore[call-arg]


def test_a_resumed_partition_is_fetched_again_without_librdkafkas_second_of_backoff():
    """Flow control resumes partitions; librdkafka's queue backoff (1 s by default) would
    keep a resumed partition idle that long. The user's kafka_config still decides."""
    settings = ConsumerSettings("g", CLIENT)
    assert consumer_config(settings)["fetch.queue.backoff.ms"] == 10
    assert consumer_config(settings)["group.id"] == "g"
    told = ClientConfig("127.0.0.1:1", kafka_config={"fetch.queue.backoff.ms": 250})
    assert consumer_config(ConsumerSettings("g", told))["fetch.queue.backoff.ms"] == 250
