"""Transactional messages end to end on a real broker: COMMIT delivers once, ROLLBACK
never, UNKNOW is settled by the checker (or rolled back after check_max checks), a second
instance of the group takes over the checks, and a message is invisible to read_committed
readers until its transaction commits."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from consumer_helpers import create_topic
from transaction_helpers import (
    COMMIT,
    FAST_CHECKS,
    ROLLBACK,
    UNKNOW,
    Listener,
    read_ids,
    started,
    wait_for,
)

from rmqcompat.clock import epoch_ms
from rmqcompat.consumer.listener import ConsumeConcurrentlyStatus, ConsumeFromWhere
from rmqcompat.consumer.push_consumer import DefaultMQPushConsumer
from rmqcompat.errors import FatalSendError, MessageTooLargeError
from rmqcompat.message import Message
from rmqcompat.message_id import new_message_id
from rmqcompat.producer.send_result import SendStatus
from rmqcompat.topics.naming import TRANS_CHECK_MAX_TIME_TOPIC, TRANS_HALF_TOPIC
from rmqcompat.transaction import CheckSettings, TransactionMQProducer
from rmqcompat.transaction.real_topic import batch_bytes
from rmqcompat.transaction.records import committed_record, half_record, sent_half
from rmqcompat.transaction.settings import TRANSACTION_CALL_TIMEOUT_S

#: long enough for several checks at FAST_CHECKS (first after 1 s, then every 1 s)
SETTLE_S = 4.0


@pytest.fixture
def tx(
    kafka_bootstrap: str,
    namespace: str,
    unique_name: Callable[[str], str],
    client_overrides: dict[str, Any],
) -> Iterator[Callable[..., TransactionMQProducer]]:
    """Factory: ``(listener, group=..., **kw) -> started TransactionMQProducer``."""
    stack = contextlib.ExitStack()
    default_group = unique_name("txg")

    def make(listener: Any, group: str = default_group, **kw: Any) -> TransactionMQProducer:
        return stack.enter_context(
            contextlib.contextmanager(started)(
                kafka_bootstrap, namespace, group, listener, client_overrides, **kw
            )
        )

    with stack:
        yield make


@pytest.fixture
def topic(kafka_bootstrap: str, namespace: str, unique_name: Callable[[str], str]) -> str:
    name = unique_name("txt")
    create_topic(kafka_bootstrap, name, namespace, partitions=2)
    return name


def test_commit_delivers_once_to_a_push_consumer(
    tx: Any, topic: str, kafka_bootstrap: str, namespace: str, client_overrides: dict[str, Any]
) -> None:
    listener = Listener(COMMIT)
    producer = tx(listener)
    result = producer.send_message_in_transaction(
        Message(topic, b"paid", tags="T", keys="order-1", properties={"p": "v"}), arg="ARG"
    )
    assert result.send_status is SendStatus.SEND_OK
    assert result.local_transaction_state is COMMIT
    assert result.message_queue is not None and result.message_queue.topic == TRANS_HALF_TOPIC
    assert listener.executed == [(result.msg_id, "ARG")]

    got: list[Any] = []
    consumer = DefaultMQPushConsumer(
        "txc",
        kafka_bootstrap,
        namespace=namespace,
        kafka_config=client_overrides,
        consume_from_where=ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET,
    )
    consumer.subscribe(topic)
    consumer.register_message_listener(
        lambda msgs, ctx: got.extend(msgs) or ConsumeConcurrentlyStatus.CONSUME_SUCCESS
    )
    consumer.start()
    try:
        assert wait_for(lambda: len(got) >= 1)
        time.sleep(SETTLE_S)  # checks would be due by now if the half were still pending
    finally:
        consumer.shutdown()
    assert [m.msg_id for m in got] == [result.msg_id]
    msg = got[0]
    assert (msg.topic, msg.body, msg.tags, msg.keys) == (topic, b"paid", "T", "order-1")
    assert msg.get_property("p") == "v"
    assert msg.get_property("TRAN_MSG") == "true" and msg.get_property("REAL_TOPIC") is None
    assert listener.checked == []
    assert read_ids(kafka_bootstrap, topic, namespace, 1.0, committed=False) == [result.msg_id]


def test_rollback_never_delivers(tx: Any, topic: str, kafka_bootstrap: str, namespace: str) -> None:
    listener = Listener(ROLLBACK, [COMMIT])
    result = tx(listener).send_message_in_transaction(Message(topic, b"x"))
    assert result.local_transaction_state is ROLLBACK
    time.sleep(SETTLE_S)
    assert read_ids(kafka_bootstrap, topic, namespace, 1.0, committed=False) == []
    assert listener.checked == []  # a decided half is never checked


@pytest.mark.parametrize("local", [UNKNOW, None, RuntimeError("local tx failed")])
def test_unknown_is_settled_by_the_checker(
    tx: Any, topic: str, kafka_bootstrap: str, namespace: str, local: Any
) -> None:
    """UNKNOW (or None, or an exception) leaves the half to the checker; it answers UNKNOW
    twice, then COMMIT: three checks about a second apart, one delivery."""
    listener = Listener(local, [UNKNOW, UNKNOW, COMMIT])
    sent = time.monotonic()
    result = tx(listener).send_message_in_transaction(Message(topic, b"x"))
    assert result.local_transaction_state is UNKNOW
    assert read_ids(kafka_bootstrap, topic, namespace, 0.5) == []
    assert wait_for(lambda: len(listener.checked) >= 3, timeout=30)
    assert time.monotonic() - sent >= 3 * FAST_CHECKS.check_interval_s - 0.5
    # the COMMIT's Kafka transaction may wait for a transaction coordinator still loading
    # (a young broker): up to TRANSACTION_CALL_TIMEOUT_S, then the next check commits
    delivered = lambda: read_ids(kafka_bootstrap, topic, namespace, 0.5) == [result.msg_id]  # noqa: E731
    assert wait_for(delivered, timeout=TRANSACTION_CALL_TIMEOUT_S + 15)
    time.sleep(2.5)
    assert listener.checked[:3] == [result.msg_id] * 3
    assert set(listener.checked) == {result.msg_id}
    assert read_ids(kafka_bootstrap, topic, namespace, 1.0) == [result.msg_id]


def test_checker_rollback_and_check_max(
    tx: Any, topic: str, kafka_bootstrap: str, namespace: str
) -> None:
    """A checker ROLLBACK drops the message; an always-UNKNOW one is asked check_max
    times, then the message is rolled back."""
    undecided = Listener(UNKNOW, [UNKNOW])
    limited = CheckSettings(check_immunity_time_s=1.0, check_interval_s=0.5, check_max=3)
    producer = tx(undecided, check=limited)
    first = producer.send_message_in_transaction(Message(topic, b"undecided"))
    assert wait_for(lambda: len(undecided.checked) >= 3)
    time.sleep(SETTLE_S)
    assert undecided.checked == [first.msg_id] * 3
    # RocketMQ's resolveDiscardMsg: the discarded half is kept where an operator finds it
    copies = read_ids(kafka_bootstrap, TRANS_CHECK_MAX_TIME_TOPIC, namespace, 1.0)
    assert copies.count(first.msg_id) == 1

    refused = Listener(UNKNOW, [ROLLBACK])
    second = tx(refused, group="other-group").send_message_in_transaction(Message(topic, b"no"))
    assert wait_for(lambda: len(refused.checked) >= 1)
    time.sleep(SETTLE_S)
    assert refused.checked == [second.msg_id]
    assert read_ids(kafka_bootstrap, topic, namespace, 1.0, committed=False) == []


def test_nothing_is_visible_before_commit(
    tx: Any, topic: str, kafka_bootstrap: str, namespace: str
) -> None:
    """While the local transaction runs, the half is stored but no reader of the real
    topic (read_committed or not) sees the message; after COMMIT it appears once."""
    running, release = threading.Event(), threading.Event()

    def slow_commit(_msg: Any) -> Any:
        running.set()
        release.wait(30)
        return COMMIT

    producer = tx(Listener(slow_commit))
    results: list[Any] = []
    sender = threading.Thread(
        target=lambda: results.append(producer.send_message_in_transaction(Message(topic, b"x")))
    )
    sender.start()
    assert running.wait(30)
    assert read_ids(kafka_bootstrap, TRANS_HALF_TOPIC, namespace, 1.0) != []
    assert read_ids(kafka_bootstrap, topic, namespace, 1.0, committed=False) == []
    release.set()
    sender.join(30)
    assert read_ids(kafka_bootstrap, topic, namespace, 1.0) == [results[0].msg_id]


def test_another_instance_of_the_group_checks_what_a_stopped_one_left(
    tx: Any, topic: str, kafka_bootstrap: str, namespace: str, unique_name: Any
) -> None:
    """Shut down with a half undecided: the next producer of the group checks it."""
    group = unique_name("txh")
    slow = CheckSettings(check_immunity_time_s=600, check_interval_s=600)
    first = tx(Listener(UNKNOW), group=group, instance_name="a", check=slow)
    result = first.send_message_in_transaction(Message(topic, b"x"))
    # Let it join its check group first: Tansu 0.6.0 keeps a member that leaves in the
    # middle of a join, and the group then rebalances for ever (Apache Kafka does not).
    assert wait_for(lambda: first._checks._pending.pending(0) == 1)
    first.shutdown()
    listener = Listener(UNKNOW, [COMMIT])
    tx(listener, group=group, instance_name="b")
    assert wait_for(lambda: read_ids(kafka_bootstrap, topic, namespace, 0.5) == [result.msg_id])
    assert listener.checked == [result.msg_id]


def test_when_a_half_partition_stays_unowned_the_check_service_rejoins_and_goes_on(
    tx: Any, topic: str, kafka_bootstrap: str, namespace: str
) -> None:
    """A half partition no member owns would never be checked: the check service leaves
    its group and joins again (rmqcompat.consumer.unowned), then checks as before."""
    listener = Listener(UNKNOW, [COMMIT])
    producer = tx(listener, check=CheckSettings(check_immunity_time_s=2.0, check_interval_s=1.0))
    checks = producer._checks
    assert wait_for(lambda: bool(checks._owned)), "the check group's first assignment"
    assigned = threading.Event()
    on_assign = checks._on_assign

    def recorded(consumer: Any, partitions: Any) -> None:
        on_assign(consumer, partitions)
        assigned.set()

    checks._on_assign = recorded  # type: ignore[method-assign]
    # the unowned-partition check finds one, once
    assert checks._unowned is not None
    verdicts = [True]
    checks._unowned.due = lambda: bool(verdicts) and verdicts.pop()  # type: ignore[method-assign]
    assert assigned.wait(30), "the check group joined again"
    result = producer.send_message_in_transaction(Message(topic, b"x"))
    assert wait_for(lambda: read_ids(kafka_bootstrap, topic, namespace, 0.5) == [result.msg_id])
    assert listener.checked == [result.msg_id]


def test_half_message_settings_are_validated_before_io() -> None:
    from rmqcompat.errors import ConfigError, InvalidNameError

    with pytest.raises(ConfigError, match="check_interval_s"):
        CheckSettings(check_interval_s=0)
    with pytest.raises(InvalidNameError):
        TransactionMQProducer("bad group", "127.0.0.1:1", transaction_listener=Listener(COMMIT))


def test_the_check_count_survives_a_restart(
    tx: Any, topic: str, kafka_bootstrap: str, namespace: str, unique_name: Any
) -> None:
    """check_max counts checks made by earlier producers of the group too: two checks,
    a restart, one more check, then the half is rolled back."""
    group = unique_name("txc")
    limited = CheckSettings(check_immunity_time_s=1.0, check_interval_s=1.0, check_max=3)
    first_listener = Listener(UNKNOW, [UNKNOW])
    first = tx(first_listener, group=group, instance_name="a", check=limited)
    result = first.send_message_in_transaction(Message(topic, b"x"))
    assert wait_for(lambda: len(first_listener.checked) >= 2)
    first.shutdown()
    assert first_listener.checked == [result.msg_id] * 2
    second_listener = Listener(UNKNOW, [UNKNOW])
    tx(second_listener, group=group, instance_name="a", check=limited)
    assert wait_for(lambda: len(second_listener.checked) >= 1)
    time.sleep(SETTLE_S)
    assert second_listener.checked == [result.msg_id]
    assert read_ids(kafka_bootstrap, topic, namespace, 1.0, committed=False) == []


def test_a_message_for_a_missing_topic_is_refused_before_the_local_transaction(
    tx: Any, unique_name: Any, kafka_bootstrap: str, namespace: str
) -> None:
    """Stored, its every COMMIT would fail and check_max would roll it back although the
    listener said COMMIT: RocketMQ refuses it before the local transaction, so do we."""
    listener = Listener(COMMIT)
    producer = tx(listener)
    with pytest.raises(FatalSendError) as refused:
        producer.send_message_in_transaction(Message(unique_name("absent"), b"x"))
    assert refused.value.code == "UNKNOWN_TOPIC_OR_PART"
    assert listener.executed == []
    assert read_ids(kafka_bootstrap, TRANS_HALF_TOPIC, namespace, 1.0, committed=False) == []


def test_a_message_over_its_real_topic_limit_is_refused_before_the_local_transaction(
    tx: Any, unique_name: Any, kafka_bootstrap: str, namespace: str
) -> None:
    """The real topic's max.message.bytes, not only the client's max_message_size: the
    record that just fits is sent and committed, one byte more is refused unsent."""
    small = unique_name("small")
    create_topic(kafka_bootstrap, small, namespace, configs={"max.message.bytes": "2000"})
    listener = Listener(COMMIT)
    producer = tx(listener)
    fits = _largest_body_within(small, producer.group, namespace, 2000)
    sent = producer.send_message_in_transaction(Message(small, fits))
    with pytest.raises(MessageTooLargeError, match=r"max\.message\.bytes is 2000"):
        producer.send_message_in_transaction(Message(small, fits + b"x"))
    assert [msg_id for msg_id, _ in listener.executed] == [sent.msg_id]
    assert read_ids(kafka_bootstrap, small, namespace, 1.0) == [sent.msg_id]


def _largest_body_within(topic: str, group: str, namespace: str, limit: int) -> bytes:
    """The longest body whose committed record (headers as a transaction writes them, with
    a message id and born time of the usual length) is at most ``limit`` bytes in its
    batch."""

    def size(length: int) -> int:
        msg = Message(topic, b"x" * length)
        record = half_record(msg, group, namespace, new_message_id(), epoch_ms())
        return batch_bytes(committed_record(sent_half(record, 0, 0, 0), namespace))

    low, high = 0, limit  # size(low) <= limit < size(high)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if size(middle) <= limit else (low, middle)
    return b"x" * low
