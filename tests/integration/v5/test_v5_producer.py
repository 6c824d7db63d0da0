"""The RocketMQ 5 Producer on Apache Kafka: every method, and bad input before any I/O."""

from __future__ import annotations

import time

import pytest
from v5_helpers import config, create_topic, message, read_topic

from rmqcompat import properties as props
from rmqcompat.transaction import CheckSettings
from rmqcompat.v5 import (
    MessageType,
    Producer,
    SendReceipt,
    TransactionChecker,
    TransactionResolution,
)
from rmqcompat.v5.exceptions import (
    IllegalArgumentException,
    IllegalStateException,
    InternalErrorException,
    NotFoundException,
)
from rmqcompat.v5.message import MESSAGE_GROUP


@pytest.fixture
def setup(kafka_bootstrap, namespace, client_overrides):
    create_topic(kafka_bootstrap, namespace, "Orders", partitions=4)
    return config(kafka_bootstrap, namespace, client_overrides)


@pytest.fixture
def producer(setup):
    instance = Producer(setup)
    instance.startup()
    yield instance
    instance.shutdown()


def _read(kafka_bootstrap, namespace, overrides, count=None):
    return read_topic(kafka_bootstrap, namespace, "Orders", overrides, count)


def test_send_stores_body_tag_keys_and_properties_and_returns_a_receipt(
    producer, kafka_bootstrap, namespace, client_overrides
):
    msg = message("Orders", b"hello", tag="TagA")
    msg.keys = "k1"
    msg.keys = "k2"
    msg.add_property("shop", "7")
    receipt = producer.send(msg)
    assert receipt.message_id == msg.message_id and receipt.transaction_id is None
    assert msg.message_type == MessageType.NORMAL
    (record,) = _read(kafka_bootstrap, namespace, client_overrides)
    headers = props.from_headers(record.headers())
    assert record.value() == b"hello" and record.offset() == receipt.offset
    assert receipt.message_queue.queue_id == record.partition()
    assert headers[props.UNIQ_KEY] == receipt.message_id
    assert (headers[props.TAGS], headers["shop"]) == ("TagA", "7")
    assert set(headers[props.KEYS].split()) == {"k1", "k2"}


def test_send_async_resolves_to_a_receipt(producer, kafka_bootstrap, namespace, client_overrides):
    futures = [producer.send_async(message("Orders", f"m{i}".encode())) for i in range(5)]
    receipts = [f.result(timeout=30) for f in futures]
    assert all(isinstance(r, SendReceipt) for r in receipts)
    ids = {r.message_id for r in receipts}
    records = _read(kafka_bootstrap, namespace, client_overrides, 5)
    assert {props.from_headers(r.headers())[props.UNIQ_KEY] for r in records} == ids


def test_fifo_messages_of_one_group_share_a_partition_in_order(
    producer, kafka_bootstrap, namespace, client_overrides
):
    msgs = [message("Orders", f"{i}".encode(), message_group="order-42") for i in range(6)]
    receipts = [producer.send(msg) for msg in msgs]
    assert {msg.message_type for msg in msgs} == {MessageType.FIFO}
    assert len({r.message_queue.queue_id for r in receipts}) == 1
    records = _read(kafka_bootstrap, namespace, client_overrides, 6)
    assert [r.value() for r in records] == [f"{i}".encode() for i in range(6)]
    assert {props.from_headers(r.headers())[MESSAGE_GROUP] for r in records} == {"order-42"}


def test_a_delay_message_arrives_after_its_time_through_the_forwarder(
    producer, start_forwarder, kafka_bootstrap, namespace, client_overrides
):
    start_forwarder("100ms 200ms 300ms 400ms 500ms 600ms 700ms 800ms 900ms 1s")
    due_s = int(time.time()) + 2
    msg = message("Orders", b"later", delivery_timestamp=due_s)
    producer.send(msg)
    assert msg.message_type == MessageType.DELAY
    (record,) = _read(kafka_bootstrap, namespace, client_overrides, 1)
    assert record.value() == b"later"
    assert record.timestamp()[1] >= due_s * 1000


LEVELS = "100ms 200ms 300ms 400ms 500ms 600ms 700ms 800ms 900ms 1s"


def test_a_delay_message_recalled_before_its_time_is_never_delivered(
    producer, start_forwarder, kafka_bootstrap, namespace, client_overrides
):
    forwarder = start_forwarder(LEVELS)
    due_s = int(time.time()) + 4
    recalled = producer.send(message("Orders", b"recalled", delivery_timestamp=due_s))
    kept = producer.send(message("Orders", b"kept", delivery_timestamp=due_s))
    assert recalled.recall_handle and kept.recall_handle
    assert producer.recall_message("Orders", recalled.recall_handle) == recalled.message_id
    # the kept one arrives after its time; the recalled one, due at the same time, never
    (record,) = _read(kafka_bootstrap, namespace, client_overrides, 1)
    assert record.value() == b"kept"
    time.sleep(1.5)  # both hops of the recalled message are long past
    assert [r.value() for r in _read(kafka_bootstrap, namespace, client_overrides)] == [b"kept"]
    recalled_total = sum(
        sample.value
        for family in forwarder.metrics.registry.collect()
        if family.name == "rmqcompat_forwarder_recalled"
        for sample in family.samples
        if sample.name.endswith("_total")
    )
    assert recalled_total == 1  # dropped once, and counted


def test_a_recall_survives_a_forwarder_restart(
    producer, start_forwarder, kafka_bootstrap, namespace, client_overrides
):
    first = start_forwarder(LEVELS)
    due_s = int(time.time()) + 5
    recalled = producer.send(message("Orders", b"recalled", delivery_timestamp=due_s))
    first.shutdown()  # the recall is written while no forwarder runs
    producer.recall_message("Orders", recalled.recall_handle or "")
    start_forwarder(LEVELS)
    producer.send(message("Orders", b"marker", delivery_timestamp=due_s + 1))
    (record,) = _read(kafka_bootstrap, namespace, client_overrides, 1)
    assert record.value() == b"marker"
    assert [r.value() for r in _read(kafka_bootstrap, namespace, client_overrides)] == [b"marker"]


def test_a_recall_after_delivery_or_of_a_normal_message_is_refused_as_upstream(
    producer, start_forwarder, kafka_bootstrap, namespace, client_overrides
):
    start_forwarder(LEVELS)
    receipt = producer.send(message("Orders", b"soon", delivery_timestamp=int(time.time()) + 1))
    _read(kafka_bootstrap, namespace, client_overrides, 1)  # delivered
    with pytest.raises(InternalErrorException, match="timestamp invalid") as late:
        producer.recall_message("Orders", receipt.recall_handle or "")
    assert late.value.code == 50001
    normal = producer.send(message("Orders", b"now"))
    assert normal.recall_handle is None
    with pytest.raises(InternalErrorException, match="recall handle is invalid"):
        producer.recall_message("Orders", normal.recall_handle)  # type: ignore[arg-type]
    later = producer.send(message("Orders", b"x", delivery_timestamp=int(time.time()) + 60))
    with pytest.raises(InternalErrorException, match="topic not match"):
        producer.recall_message("Other", later.recall_handle or "")
    with pytest.raises(InternalErrorException, match="recall handle is invalid"):
        producer.recall_message("Orders", "not a handle")
    assert producer.recall_message_async("Orders", later.recall_handle or "").result(10) == (
        later.message_id
    )


def test_unknown_topic_raises_not_found_with_code_40402(
    kafka_bootstrap, namespace, client_overrides
):
    # Whether a missing topic appears is the broker's policy; where it may not (the
    # client does not ask for it), the send fails at once, as RocketMQ's "topic not found".
    overrides = {**client_overrides, "allow.auto.create.topics": False}
    producer = Producer(config(kafka_bootstrap, namespace, overrides))
    producer.startup()
    try:
        with pytest.raises(NotFoundException) as caught:
            producer.send(message("NoSuchTopic", b"x"))
        assert caught.value.code == 40402
    finally:
        producer.shutdown()


def test_bad_input_raises_before_any_io_and_nothing_is_sent(
    producer, kafka_bootstrap, namespace, client_overrides
):
    with pytest.raises(IllegalArgumentException, match="Message body size exceeds"):
        producer.send(message("Orders", b"x" * (4 * 1024 * 1024 + 1)))
    with pytest.raises(IllegalArgumentException, match="transaction must come from"):
        producer.send(message("Orders", b"x"), transaction=object())  # type: ignore[arg-type]
    with pytest.raises(IllegalArgumentException, match="must be a Message"):
        producer.send_async(b"raw")  # type: ignore[arg-type]
    with pytest.raises(IllegalArgumentException, match="checker should not be null"):
        producer.begin_transaction()
    with pytest.raises(InternalErrorException, match="recall handle is invalid"):
        producer.recall_message("Orders", "handle")
    producer.send(message("Orders", b"only this one"))
    assert [r.value() for r in _read(kafka_bootstrap, namespace, client_overrides)] == [
        b"only this one"
    ]


def test_a_producer_not_started_or_shut_down_refuses_with_illegal_state(setup):
    producer = Producer(setup)
    with pytest.raises(IllegalStateException, match="not running"):
        producer.send(message("Orders", b"x"))
    producer.startup()
    producer.shutdown()
    with pytest.raises(IllegalStateException, match="not running"):
        producer.send_async(message("Orders", b"x"))
    with pytest.raises(IllegalStateException):
        producer.shutdown()


class _Checker(TransactionChecker):
    def __init__(self, answer: TransactionResolution) -> None:
        self.answer = answer
        self.checked: list[str] = []

    def check(self, message):
        self.checked.append(message.message_id)
        return self.answer


def test_transaction_commit_and_rollback_decided_later(
    setup, kafka_bootstrap, namespace, client_overrides
):
    producer = Producer(setup, checker=_Checker(TransactionResolution.ROLLBACK))
    producer.startup()
    try:
        kept, dropped = producer.begin_transaction(), producer.begin_transaction()
        half = message("Orders", b"kept")
        receipt = producer.send(half, kept)
        assert half.message_type == MessageType.TRANSACTION
        assert kept.message_id == receipt.message_id
        producer.send(message("Orders", b"dropped"), dropped)
        assert receipt.transaction_id is not None
        with pytest.raises(IllegalArgumentException, match="already existed"):
            producer.send(message("Orders", b"again"), kept)
        with pytest.raises(IllegalArgumentException, match="transactional message"):
            producer.send(message("Orders", b"x", message_group="g"), producer.begin_transaction())
        with pytest.raises(IllegalArgumentException, match="no message in transaction"):
            producer.begin_transaction().commit()
        assert _read(kafka_bootstrap, namespace, client_overrides) == []  # halves are hidden
        dropped.rollback()
        kept.commit()
        producer.send(message("Orders", b"marker"))
        records = _read(kafka_bootstrap, namespace, client_overrides)
        assert sorted(r.value() for r in records) == [b"kept", b"marker"]
    finally:
        producer.shutdown()


@pytest.mark.slow
def test_an_undecided_half_is_settled_by_the_checker(
    setup, kafka_bootstrap, namespace, client_overrides
):
    checker = _Checker(TransactionResolution.COMMIT)
    fast = CheckSettings(check_immunity_time_s=1, check_interval_s=1)
    producer = Producer(setup, checker=checker, check=fast)
    producer.startup()
    try:
        transaction = producer.begin_transaction()
        producer.send(message("Orders", b"by the checker"), transaction)
        (record,) = _read(kafka_bootstrap, namespace, client_overrides, 1)
        assert record.value() == b"by the checker"
        assert checker.checked == [transaction.message_id]
    finally:
        producer.shutdown()
