"""The librdkafka settings of a transactional producer's three clients."""

from __future__ import annotations

from typing import Any

from rmqcompat.config import ClientConfig
from rmqcompat.producer.immediate import SEND_AT_ONCE

#: How long a Kafka transaction of ours may stay open before the broker aborts it. It only
#: spans two records and a commit; short, because an open transaction holds back every
#: read_committed reader of its partitions (after a SIGKILL without a restart).
TRANSACTION_TIMEOUT_MS = 10_000
#: Bound of ``init_transactions`` and ``commit_transaction`` (a fresh broker first loads
#: its transaction coordinator, which takes seconds).
TRANSACTION_CALL_TIMEOUT_S = 30.0


def transactional_id(group: str, instance_name: str, namespace: str) -> str:
    """Fixed per namespace, group and instance: a restart fences its predecessor."""
    return f"rmqcompat-trans|{namespace}|{group}|{instance_name}"


def check_group_id(group: str, namespace: str) -> str:
    """The Kafka consumer group of a producer group's check services (``.`` never
    occurs in a RocketMQ group, so no consumer group can have this id)."""
    return f"{namespace}%{group}.rmq.trans-check" if namespace else f"{group}.rmq.trans-check"


def half_producer(client: ClientConfig, send_msg_timeout_ms: int) -> dict[str, Any]:
    """The half sender's client: the caller waits for each half, so no batch linger."""
    explicit = {
        **SEND_AT_ONCE,
        "acks": "all",
        "enable.idempotence": True,
        "message.timeout.ms": send_msg_timeout_ms,
    }
    return client.librdkafka("producer", **explicit)


def ender(client: ClientConfig, tid: str, send_msg_timeout_ms: int) -> dict[str, Any]:
    explicit = {
        "transactional.id": tid,
        "transaction.timeout.ms": TRANSACTION_TIMEOUT_MS,
        "message.timeout.ms": min(send_msg_timeout_ms, TRANSACTION_TIMEOUT_MS),
    }
    return client.librdkafka("producer", **explicit)


def check_consumer(client: ClientConfig, group_id: str) -> dict[str, Any]:
    """``read_committed``: aborted decisions never count; ``range``: half partition p and
    op partition p go to the same member (equal partition counts)."""
    explicit = {
        "group.id": group_id,
        "isolation.level": "read_committed",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "partition.assignment.strategy": "range",
    }
    return client.librdkafka("consumer", **explicit)
