"""Drop-in clients without a broker: settings collected and mapped at start(), start
failures before any I/O, and the callback rules (what counts as consumed)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from rmqcompat.client import (
    ConsumeStatus,
    MessageModel,
    Producer,
    PushConsumer,
    TransactionMQProducer,
    TransactionStatus,
)
from rmqcompat.consumer.listener import (
    ConsumeConcurrentlyContext,
    ConsumeConcurrentlyStatus,
    ConsumeOrderlyContext,
    ConsumeOrderlyStatus,
    MessageListenerOrderly,
)
from rmqcompat.dropin.callbacks import ConcurrentCallbacks, OrderlyCallbacks, TopicCallbacks
from rmqcompat.dropin.options import ClientOptions, bootstrap_servers
from rmqcompat.dropin.transaction import as_state
from rmqcompat.errors import ConfigError, InvalidNameError
from rmqcompat.exceptions import (
    ProducerSendSyncFailed,
    ProducerStartFailed,
    PushConsumerStartFailed,
)
from rmqcompat.message import MessageExt, MessageQueue
from rmqcompat.transaction import LocalTransactionState


def test_name_server_list_becomes_bootstrap_servers() -> None:
    assert bootstrap_servers("h1:9092;h2:9092") == "h1:9092,h2:9092"
    assert bootstrap_servers(" h1:9092 , h2:9092;") == "h1:9092,h2:9092"


def test_session_credentials_map_to_sasl_plain_over_ssl() -> None:
    options = ClientOptions("G")
    options.set_session_credentials("AK", b"SK", "ALIYUN")
    assert options.librdkafka() == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "PLAIN",
        "sasl.username": "AK",
        "sasl.password": "SK",
    }
    assert options.channel == "ALIYUN"
    assert "SK" not in repr(options)  # the secret is masked


def test_kafka_config_wins_over_the_sasl_defaults_and_instance_name_is_client_id() -> None:
    options = ClientOptions("G", instance_name="inst-1")
    options.set_session_credentials("AK", "SK", "")
    options.set_kafka_config(
        {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512"}
    )
    settings = options.librdkafka()
    assert settings["security.protocol"] == "SASL_PLAINTEXT"
    assert settings["sasl.mechanism"] == "SCRAM-SHA-512"
    assert settings["sasl.username"] == "AK"
    assert settings["client.id"] == "inst-1"


def test_producer_constructor_arguments_and_setters_are_checked() -> None:
    producer = Producer("G", True, timeout=1500, compress_level=6, max_message_size=1024)
    assert producer.orderly
    producer.set_group("G2")
    producer.set_instance_name("i")
    producer.set_name_server_domain("http://jmenv.tbsite.net:8080/rocketmq/nsaddr")
    producer.set_message_trace(True)
    with pytest.raises(ConfigError, match="compress level"):
        producer.set_compress_level(10)
    with pytest.raises(ConfigError, match="timeout"):
        producer.set_timeout(0)
    with pytest.raises(ConfigError, match="max_message_size"):
        producer.set_max_message_size(-1)


def test_producer_start_without_address_fails_before_any_io() -> None:
    producer = Producer("G")
    with pytest.raises(ProducerStartFailed, match="set_name_server_address"):
        producer.start()
    bad = Producer("bad group")
    bad.set_name_server_address("127.0.0.1:1")
    with pytest.raises(ProducerStartFailed) as caught:
        bad.start()
    assert isinstance(caught.value.__cause__, InvalidNameError)


def test_send_before_start_raises_the_methods_exception() -> None:
    from rmqcompat.client import Message

    with pytest.raises(ProducerSendSyncFailed, match="start"):
        Producer("G").send_sync(Message("T"))


def test_transaction_producer_start_needs_an_address() -> None:
    producer = TransactionMQProducer("G", lambda msg: TransactionStatus.COMMIT)
    with pytest.raises(ProducerStartFailed, match="bootstrap"):
        producer.start()


def test_push_consumer_start_without_subscription_fails_first() -> None:
    consumer = PushConsumer("G")
    consumer.set_name_server_address("127.0.0.1:1")  # never contacted
    with pytest.raises(PushConsumerStartFailed, match="subscribe"):
        consumer.start()
    consumer.shutdown()  # harmless on a consumer that never started


def test_push_consumer_start_without_address_and_bad_settings() -> None:
    consumer = PushConsumer("G")
    consumer.subscribe("T", lambda msg: ConsumeStatus.CONSUME_SUCCESS)
    with pytest.raises(PushConsumerStartFailed, match="set_name_server_address"):
        consumer.start()
    consumer.set_name_server_address("127.0.0.1:1")
    consumer.set_thread_count(0)
    with pytest.raises(PushConsumerStartFailed, match="consume_thread_max") as caught:
        consumer.start()
    assert isinstance(caught.value.__cause__, ConfigError)
    with pytest.raises(ConfigError, match="message model"):
        consumer.set_message_model(7)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="callable"):
        consumer.subscribe("T", "not a function")  # type: ignore[arg-type]


def test_push_consumer_accepts_both_message_models() -> None:
    assert PushConsumer("G", message_model=MessageModel.BROADCASTING)
    consumer = PushConsumer("G", True)
    consumer.set_message_model(MessageModel.CLUSTERING)
    assert consumer.orderly


def _msgs(*topics: str) -> list[MessageExt]:
    return [MessageExt(topic, b"b%d" % i, f"id{i}", 0, i, 0, 0) for i, topic in enumerate(topics)]


def _context() -> ConsumeConcurrentlyContext:
    return ConsumeConcurrentlyContext(MessageQueue("A", 0))


def test_each_topic_has_its_own_callback() -> None:
    seen: list[tuple[str, bytes]] = []
    callbacks = {
        "A": lambda m: seen.append(("A", m.body)) or ConsumeStatus.CONSUME_SUCCESS,
        "B": lambda m: seen.append(("B", m.body)) or ConsumeStatus.CONSUME_SUCCESS,
    }
    status = ConcurrentCallbacks(TopicCallbacks(callbacks)).consume_message(
        _msgs("A", "B"), _context()
    )
    assert status is ConsumeConcurrentlyStatus.CONSUME_SUCCESS
    assert seen == [("A", b"b0"), ("B", b"b1")]


@pytest.mark.parametrize(
    "failure",
    [ConsumeStatus.RECONSUME_LATER, None, "ok", True, RuntimeError("boom")],
    ids=["RECONSUME_LATER", "None", "str", "bool", "exception"],
)
def test_anything_but_success_is_reconsume_later_and_logged(
    failure: Any, caplog: pytest.LogCaptureFixture
) -> None:
    def callback(msg: Any) -> Any:
        if msg.body == b"b1":
            if isinstance(failure, BaseException):
                raise failure
            return failure
        return 0  # the integer value counts, as in upstream's C callback

    context = _context()
    with caplog.at_level(logging.WARNING, "rmqcompat.client"):
        status = ConcurrentCallbacks(TopicCallbacks({"A": callback})).consume_message(
            _msgs("A", "A", "A"), context
        )
    assert status is ConsumeConcurrentlyStatus.CONSUME_SUCCESS
    assert context.ack_index == 0  # the first succeeded; the failed one and the rest retry
    if failure is not ConsumeStatus.RECONSUME_LATER:
        assert "RECONSUME_LATER" in caplog.text and "id1" in caplog.text


def test_a_failed_first_message_fails_the_batch() -> None:
    callbacks = {"A": lambda m: None}
    status = ConcurrentCallbacks(TopicCallbacks(callbacks)).consume_message(
        _msgs("A", "A"), _context()
    )
    assert status is ConsumeConcurrentlyStatus.RECONSUME_LATER


def test_orderly_callbacks_success_or_suspend() -> None:
    listener = OrderlyCallbacks(TopicCallbacks({"A": lambda m: ConsumeStatus.CONSUME_SUCCESS}))
    assert isinstance(listener, MessageListenerOrderly)
    context = ConsumeOrderlyContext(MessageQueue("A", 0))
    assert listener.consume_message(_msgs("A", "A"), context) is ConsumeOrderlyStatus.SUCCESS
    for answer in (ConsumeStatus.RECONSUME_LATER, None, RuntimeError("x")):

        def callback(m: Any, answer: Any = answer) -> Any:
            if isinstance(answer, BaseException):
                raise answer
            return answer

        suspended = OrderlyCallbacks(TopicCallbacks({"A": callback})).consume_message(
            _msgs("A"), context
        )
        assert suspended is ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT


def test_a_topic_without_callback_goes_to_the_last_one_registered() -> None:
    """A retry of a topic the group no longer subscribes: upstream's C client keeps one
    callback, the last registered, for every message."""
    seen: list[str] = []
    callbacks = TopicCallbacks(
        {
            "A": lambda m: seen.append("A") or ConsumeStatus.CONSUME_SUCCESS,
            "B": lambda m: seen.append("B") or ConsumeStatus.CONSUME_SUCCESS,
        }
    )
    status = ConcurrentCallbacks(callbacks).consume_message(_msgs("GONE", "A"), _context())
    assert status is ConsumeConcurrentlyStatus.CONSUME_SUCCESS
    assert seen == ["B", "A"]
    context = ConsumeOrderlyContext(MessageQueue("GONE", 0))
    orderly = OrderlyCallbacks(callbacks).consume_message(_msgs("GONE"), context)
    assert orderly is ConsumeOrderlyStatus.SUCCESS


@pytest.mark.parametrize(
    ("reconsume_times", "pause_ms"), [(0, 1000), (15, 1000), (16, 5000), (40, 5000)]
)
def test_a_failed_orderly_message_waits_as_the_c_client_has_it(
    reconsume_times: int, pause_ms: int
) -> None:
    msgs = _msgs("A")
    msgs[0].reconsume_times = reconsume_times
    context = ConsumeOrderlyContext(MessageQueue("A", 0))
    status = OrderlyCallbacks(TopicCallbacks({"A": lambda m: None})).consume_message(msgs, context)
    assert status is ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT
    assert context.suspend_current_queue_time_millis == pause_ms


def test_transaction_status_maps_to_the_native_state() -> None:
    assert as_state(TransactionStatus.COMMIT) is LocalTransactionState.COMMIT_MESSAGE
    assert as_state(TransactionStatus.ROLLBACK) is LocalTransactionState.ROLLBACK_MESSAGE
    assert as_state(TransactionStatus.UNKNOWN) is LocalTransactionState.UNKNOW
    assert as_state(1) is LocalTransactionState.ROLLBACK_MESSAGE
    for foreign in (None, False, "COMMIT", 9):  # passed on: the native producer logs UNKNOW
        assert as_state(foreign) is foreign


@pytest.mark.parametrize(("orderly", "batch"), [(True, 1), (False, 8)])
def test_orderly_consumption_takes_one_message_per_call_whatever_the_batch_size(
    orderly: bool, batch: int
) -> None:
    """With several per call, a failure would bring back the ones already consumed (an
    orderly batch is retried whole); the C client takes them one at a time."""
    consumer = PushConsumer("G", orderly)
    consumer.set_name_server_address("127.0.0.1:1")
    consumer.set_message_batch_max_size(8)
    consumer.subscribe("T", lambda m: ConsumeStatus.CONSUME_SUCCESS)
    native = consumer._native_consumer()  # built, not started: no I/O
    assert native.settings.consume_message_batch_max_size == batch
