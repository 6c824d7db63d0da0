"""Helpers of the transaction tests: a scripted listener, raw reads of a topic at either
isolation level, and a transactional producer factory with short check settings."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from consumer_helpers import read_records

from rmqcompat import properties as props
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
    """UNIQ_KEYs of the records of ``topic``, read from its beginning up to its end (when
    the read began) or for at most ``seconds`` (a read_committed reader stops short of an
    open transaction)."""
    records = read_records(bootstrap, topic, namespace, max_s=seconds, committed=committed)
    return [props.from_headers(r.headers()).get(props.UNIQ_KEY, "") for r in records]


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
