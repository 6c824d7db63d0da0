"""Helpers of the transaction tests: a scripted listener, raw reads of a topic at either
isolation level, and a transactional producer factory with short check settings."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from confluent_kafka import Consumer, TopicPartition

from rmqcompat import properties as props
from rmqcompat.topics.naming import to_kafka_topic
from rmqcompat.transaction import CheckSettings, LocalTransactionState, TransactionMQProducer

COMMIT = LocalTransactionState.COMMIT_MESSAGE
ROLLBACK = LocalTransactionState.ROLLBACK_MESSAGE
UNKNOW = LocalTransactionState.UNKNOW
#: First check 1 s after the half, then every 1 s (RocketMQ: 6 s, then 60 s).
FAST_CHECKS = CheckSettings(check_immunity_time_s=1.0, check_interval_s=1.0, check_max=15)


class Listener:
    """Answers the local transaction with ``local`` and checks from ``checks`` (the last
    answer repeats); records every call."""

    def __init__(self, local: Any, checks: list[Any] | None = None) -> None:
        self.local = local
        self.checks = list(checks or [UNKNOW])
        self.executed: list[tuple[str, Any]] = []
        self.checked: list[str] = []
        self.lock = threading.Lock()

    def execute_local_transaction(self, msg: Any, arg: Any) -> Any:
        self.executed.append((msg.msg_id, arg))
        if isinstance(self.local, BaseException):
            raise self.local
        return self.local(msg) if callable(self.local) else self.local

    def check_local_transaction(self, msg: Any) -> Any:
        with self.lock:
            self.checked.append(msg.msg_id)
            answer = self.checks[min(len(self.checked), len(self.checks)) - 1]
        return answer


def read_ids(
    bootstrap: str, topic: str, namespace: str, seconds: float, committed: bool = True
) -> list[str]:
    """UNIQ_KEYs of the records of ``topic``, read from its beginning up to its end (the
    high watermark when the read starts) or for at most ``seconds`` after assignment (a
    read_committed reader stops short of an open transaction)."""
    physical = to_kafka_topic(topic, namespace)
    isolation = "read_committed" if committed else "read_uncommitted"
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "tx-reader",
            "enable.auto.commit": False,
            "isolation.level": isolation,
            # One partition's first fetch must not wait out the broker's 500 ms default
            # on an empty sibling that happened to become fetchable first.
            "fetch.wait.max.ms": 10,
        }
    )
    try:
        parts = consumer.list_topics(physical, timeout=10).topics[physical].partitions
        tps = [TopicPartition(physical, p) for p in parts]
        ends = {
            tp.partition: consumer.get_watermark_offsets(tp, timeout=10, cached=False)[1]
            for tp in tps
        }
        consumer.assign([TopicPartition(physical, p, -2) for p in parts])
        ids: list[str] = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for record in consumer.consume(100, 0.05):
                if record.error() is None:
                    ids.append(props.from_headers(record.headers()).get(props.UNIQ_KEY, ""))
            if all(
                ends[tp.partition] == 0 or tp.offset >= ends[tp.partition]
                for tp in consumer.position(tps)
            ):
                break
        return ids
    finally:
        consumer.close()


def wait_for(predicate: Callable[[], bool], timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def started(
    bootstrap: str, namespace: str, group: str, listener: Any, overrides: dict[str, Any], **kw: Any
) -> Iterator[TransactionMQProducer]:
    kw.setdefault("check", FAST_CHECKS)
    producer = TransactionMQProducer(
        group,
        bootstrap,
        transaction_listener=listener,
        namespace=namespace,
        kafka_config=overrides,
        **kw,
    )
    producer.start()
    try:
        yield producer
    finally:
        producer.shutdown()
