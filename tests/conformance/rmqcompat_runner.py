"""Runs a scenario on rmqcompat over the session's Kafka broker through rmqcompat's public
4.x API (DefaultMQProducer / TransactionMQProducer, DefaultMQPushConsumer with a concurrent
or orderly listener, DelayForwarder, the DLQ reader), recording the same raw observations
as ``Driver.java`` prints for RocketMQ."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from consumer_helpers import create_topic
from reference_broker import (
    CONFORMANCE_DELAY_LEVELS,
    TRANSACTION_CHECK_INTERVAL_MS,
    TRANSACTION_CHECK_MAX,
    TRANSACTION_TIMEOUT_MS,
)
from rmqcompat_observer import (
    KafkaSide,
    Observer,
    now_ms,
    read_check_max_copies_into,
    read_dead_letters_into,
)
from scenario import CONSUMER_READY_MS, Reply, Scenario

from rmqcompat import (
    ConsumeConcurrentlyStatus,
    ConsumeFromWhere,
    ConsumeOrderlyStatus,
    DefaultMQProducer,
    DefaultMQPushConsumer,
    DelayForwarder,
    LocalTransactionState,
    Message,
    MessageListenerOrderly,
    MessageModel,
    RmqCompatError,
    TransactionMQProducer,
)
from rmqcompat.config import ClientConfig
from rmqcompat.reachability import require_broker
from rmqcompat.transaction import CheckSettings

#: How long a scenario waits for its broker to answer before it starts (see ``run``).
BROKER_READY_S = 60.0

#: The RocketMQ broker's transaction settings (reference_broker.py), in rmqcompat's terms.
CHECKS = CheckSettings(
    check_immunity_time_s=TRANSACTION_TIMEOUT_MS / 1000,
    check_interval_s=TRANSACTION_CHECK_INTERVAL_MS / 1000,
    check_max=TRANSACTION_CHECK_MAX,
)
_TRANSACTION_STATES = {
    "commit": LocalTransactionState.COMMIT_MESSAGE,
    "rollback": LocalTransactionState.ROLLBACK_MESSAGE,
    "unknown": LocalTransactionState.UNKNOW,
}


def run(scenario: Scenario, side: KafkaSide, topic: str, group: str) -> dict[str, Any]:
    """Run ``scenario`` on rmqcompat; the raw observations."""
    observer = Observer(scenario)
    # The worker's broker serves every test of its worker, and beside the reference's
    # JVMs on a 2-core CI machine it has taken longer than the producer's start probe
    # (RocketMQ's 3 s send timeout) to answer metadata (send_to_missing_topic at 6dc65fc,
    # later_then_success at ed7f87a): the scenarios compare what happens to messages, not
    # how fast a loaded broker answers, so wait for it here with a generous bound.
    require_broker(ClientConfig(side.bootstrap, kafka_config=side.overrides), BROKER_READY_S)
    if scenario.create_topic:
        create_topic(side.bootstrap, topic, side.namespace, partitions=scenario.queues)
    with ExitStack() as stack:
        stack.enter_context(forwarder(side))
        consumer = _consumer(scenario, side, topic, group, observer, stack)
        if scenario.consumer_first:
            consumer.start()
            time.sleep(CONSUMER_READY_MS / 1000)
        with _producer(scenario, side, group, observer) as send:
            for item in scenario.messages:
                before = now_ms()
                msg = Message(
                    topic,
                    item.body.encode(),
                    tags=item.tags,
                    keys=item.key,
                    properties=dict(item.properties),
                    delay_time_level=item.delay_level,
                    deliver_time_ms=before + item.deliver_after_ms
                    if item.deliver_after_ms
                    else None,
                )
                try:
                    observer.sent(item.key, send(msg), before)
                except RmqCompatError as exc:
                    observer.event("send_errors", {"key": item.key, "error": repr(exc)})
            if not scenario.consumer_first:
                time.sleep(scenario.queue_age_ms / 1000)
                consumer.start()
            observer.await_quiet()
            consumer.shutdown()
    read_dead_letters_into(side, group, observer)
    if scenario.transaction is not None:
        read_check_max_copies_into(side, topic, observer)
    return observer.raw


def _consumer(
    scenario: Scenario,
    side: KafkaSide,
    topic: str,
    group: str,
    observer: Observer,
    stack: ExitStack,
) -> DefaultMQPushConsumer:
    consumer = DefaultMQPushConsumer(
        group,
        bootstrap_servers=side.bootstrap,
        namespace=side.namespace,
        kafka_config=side.overrides,
        message_delay_level=CONFORMANCE_DELAY_LEVELS,
        consume_from_where=ConsumeFromWhere[f"CONSUME_FROM_{scenario.consume_from}_OFFSET"],
        consume_message_batch_max_size=scenario.batch_size,
        max_reconsume_times=scenario.max_reconsume_times,
        message_model=MessageModel[scenario.model],
        offset_store_dir=stack.enter_context(tempfile.TemporaryDirectory()),
        persist_consumer_offset_interval=0.2,
        **_young_queue(scenario),
    )
    consumer.subscribe(topic, scenario.subscription)
    consumer.register_message_listener(
        _Orderly(observer) if scenario.orderly else _concurrent(observer)
    )
    return consumer


def _young_queue(scenario: Scenario) -> dict[str, float]:
    """The scenario's bound of a young queue's age, if it sets one."""
    age = scenario.young_queue_max_age_s
    return {} if age is None else {"young_queue_max_age_s": age}


def _concurrent(observer: Observer) -> Any:
    def consume(msgs: list[Any], context: Any) -> ConsumeConcurrentlyStatus | None:
        reply = observer.deliver(msgs)
        if reply.delay_level is not None:
            context.delay_level_when_next_consume = reply.delay_level
        if reply.kind == "success":
            if reply.ack_index is not None:
                context.ack_index = reply.ack_index
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS
        return _fail(reply, ConsumeConcurrentlyStatus.RECONSUME_LATER)

    return consume


class _Orderly(MessageListenerOrderly):
    def __init__(self, observer: Observer) -> None:
        self._observer = observer

    def consume_message(self, msgs: list[Any], context: Any) -> ConsumeOrderlyStatus | None:
        reply = self._observer.deliver(msgs)
        if reply.suspend_ms is not None:
            context.suspend_current_queue_time_millis = reply.suspend_ms
        if reply.kind == "success":
            return ConsumeOrderlyStatus.SUCCESS
        return _fail(reply, ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT)


def _fail(reply: Reply, status: Any) -> Any:
    if reply.kind == "exception":
        raise RuntimeError("scenario: listener throws")
    return None if reply.kind == "null" else status


@contextmanager
def forwarder(side: KafkaSide, levels: str = CONFORMANCE_DELAY_LEVELS) -> Iterator[None]:
    forwarder = DelayForwarder(
        side.bootstrap,
        namespace=side.namespace,
        message_delay_level=levels,
        kafka_config=side.overrides,
    )
    forwarder.start()
    try:
        yield
    finally:
        forwarder.shutdown()


@contextmanager
def _producer(scenario: Scenario, side: KafkaSide, group: str, observer: Observer) -> Iterator[Any]:
    """A started producer as a ``send(msg) -> msg_id`` function."""
    if scenario.transaction is None:
        producer: Any = DefaultMQProducer(
            "producer-" + group,
            side.bootstrap,
            namespace=side.namespace,
            message_delay_level=CONFORMANCE_DELAY_LEVELS,
            kafka_config=side.overrides,
            connect_on_start=False,  # run() waited for the broker
        )
        send = lambda msg: producer.send(msg).msg_id  # noqa: E731
    else:
        producer = TransactionMQProducer(
            "producer-" + group,
            side.bootstrap,
            transaction_listener=_TransactionListener(scenario, observer),
            namespace=side.namespace,
            kafka_config=side.overrides,
            check=CHECKS,
        )
        send = lambda msg: producer.send_message_in_transaction(msg).msg_id  # noqa: E731
    producer.start()
    try:
        yield send
    finally:
        producer.shutdown()


class _TransactionListener:
    def __init__(self, scenario: Scenario, observer: Observer) -> None:
        self._transactions = scenario.transaction or {}
        self._observer = observer
        self._checks: dict[str, int] = {}

    def execute_local_transaction(self, msg: Message, arg: Any) -> LocalTransactionState:
        key = str(msg.keys)
        self._observer.event("locals", {"key": key, "ms": now_ms()})
        return self._answer(self._transactions[key].local)

    def check_local_transaction(self, msg: Any) -> LocalTransactionState:
        key = msg.keys
        self._observer.event("checks", {"key": key, "ms": now_ms()})
        answers = self._transactions[key].checks
        n = self._checks[key] = self._checks.get(key, 0) + 1
        return self._answer(answers[min(n, len(answers)) - 1] if answers else "unknown")

    @staticmethod
    def _answer(answer: str) -> LocalTransactionState:
        if answer == "exception":
            raise RuntimeError("scenario: local transaction throws")
        return _TRANSACTION_STATES[answer]
