"""The drop-in ``TransactionMQProducer`` against a real broker: each TransactionStatus of
``local_execute`` and of the checker, ``user_args``, exceptions, and plain sends."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from consumer_helpers import create_topic
from dropin_helpers import Connect
from transaction_helpers import read_ids, wait_for

from rmqcompat.client import (
    Message,
    ReceivedMessage,
    SendStatus,
    TransactionMQProducer,
    TransactionStatus,
)
from rmqcompat.transaction import CheckSettings

FAST = CheckSettings(check_immunity_time_s=1.0, check_interval_s=1.0)


@pytest.fixture
def topic(kafka_bootstrap: str, namespace: str, unique_name: Callable[[str], str]) -> str:
    name = unique_name("dtx")
    create_topic(kafka_bootstrap, name, namespace)
    return name


class Checker:
    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.seen: list[ReceivedMessage] = []
        self.lock = threading.Lock()

    def __call__(self, msg: ReceivedMessage) -> Any:
        with self.lock:
            self.seen.append(msg)
        return self.answer


@pytest.fixture
def make(
    kafka_bootstrap: str, namespace: str, client_overrides: dict[str, Any], unique_name: Any
) -> Iterator[Callable[[Checker], TransactionMQProducer]]:
    connect = Connect(kafka_bootstrap, namespace, client_overrides)
    started: list[TransactionMQProducer] = []

    def build(checker: Checker) -> TransactionMQProducer:
        producer = connect(TransactionMQProducer(unique_name("dtxg"), checker))
        producer.set_check_settings(FAST)
        producer.start()
        started.append(producer)
        return producer

    yield build
    for producer in started:
        producer.shutdown()


def _message(topic: str) -> Message:
    msg = Message(topic)
    msg.set_keys("transaction")
    msg.set_tags("XXX")
    msg.set_body("XXXX")
    return msg


@pytest.mark.parametrize(
    ("local", "check", "delivered"),
    [
        (TransactionStatus.COMMIT, TransactionStatus.ROLLBACK, True),
        (TransactionStatus.ROLLBACK, TransactionStatus.COMMIT, False),
        (TransactionStatus.UNKNOWN, TransactionStatus.COMMIT, True),
        (TransactionStatus.UNKNOWN, TransactionStatus.ROLLBACK, False),
        (None, TransactionStatus.COMMIT, True),  # not a TransactionStatus: UNKNOWN
        (RuntimeError("local failed"), TransactionStatus.COMMIT, True),  # UNKNOWN too
    ],
    ids=["commit", "rollback", "unknown-commit", "unknown-rollback", "none", "raises"],
)
def test_local_and_checker_answers(
    make: Any,
    topic: str,
    kafka_bootstrap: str,
    namespace: str,
    local: Any,
    check: Any,
    delivered: bool,
) -> None:
    calls: list[tuple[bytes, Any]] = []

    def local_execute(msg: ReceivedMessage, user_args: Any) -> Any:
        calls.append((msg.body, user_args))
        if isinstance(local, BaseException):
            raise local
        return local

    checker = Checker(check)
    producer = make(checker)
    result = producer.send_message_in_transaction(_message(topic), local_execute, {"k": 1})
    assert result.status is SendStatus.OK and result.offset >= 0
    assert calls == [(b"XXXX", {"k": 1})]
    decided = local in (TransactionStatus.COMMIT, TransactionStatus.ROLLBACK)
    if not decided:
        assert wait_for(lambda: len(checker.seen) >= 1)
        seen = checker.seen[0]
        assert (seen.id, seen.topic, seen.body, seen.keys) == (
            result.msg_id,
            topic,
            b"XXXX",
            b"transaction",
        )
    expected = [result.msg_id] if delivered else []
    assert wait_for(lambda: read_ids(kafka_bootstrap, topic, namespace, 0.5) == expected)
    time.sleep(2.5)  # more checks would have come by now
    assert read_ids(kafka_bootstrap, topic, namespace, 1.0) == expected  # settled once
    assert len(checker.seen) == (0 if decided else 1)


def test_plain_sends_work_on_a_transaction_producer(
    make: Any, topic: str, kafka_bootstrap: str, namespace: str
) -> None:
    producer = make(Checker(TransactionStatus.COMMIT))
    result = producer.send_sync(_message(topic))
    assert read_ids(kafka_bootstrap, topic, namespace, 1.0) == [result.msg_id]
