"""The SDK's own trace events, audited: a producer, a consumer that fails one message
once, and the forwarder, all tracing to the namespace's trace topic."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from waiting import wait_until

from rmqcompat import (
    ConsumeConcurrentlyStatus,
    ConsumeFromWhere,
    DefaultMQProducer,
    DefaultMQPushConsumer,
    DelayForwarder,
    Message,
)
from rmqcompat.config import ClientConfig
from rmqcompat.spark.audit import AuditPolicy
from rmqcompat.spark.job import AuditJob, run_batch
from rmqcompat.topics.provision import ensure_topics
from rmqcompat.topics.spec import TopicSpec

pytestmark = pytest.mark.integration
TABLE = "1s 1s 1s 2s"


def test_audit_of_a_traced_retry(
    spark: SparkSession,
    kafka_bootstrap: str,
    namespace: str,
    client_overrides: dict[str, Any],
    tmp_path: Path,
) -> None:
    common = dict(namespace=namespace, message_delay_level=TABLE, kafka_config=client_overrides)
    client = ClientConfig(kafka_bootstrap, namespace)
    ensure_topics(client.librdkafka("admin"), {"T": TopicSpec(partitions=2)}, namespace)
    forwarder = DelayForwarder(
        kafka_bootstrap,
        namespace=namespace,
        message_delay_level=TABLE,
        kafka_config=client_overrides,
    )
    forwarder.start()
    succeeded: set[str] = set()
    failed_once: set[str] = set()
    lock = threading.Lock()

    def listener(msgs: list[Any], _context: Any) -> ConsumeConcurrentlyStatus:
        with lock:
            for msg in msgs:
                if msg.body == b"m0" and msg.reconsume_times == 0:
                    failed_once.add(msg.msg_id)
                    return ConsumeConcurrentlyStatus.RECONSUME_LATER
                succeeded.add(msg.msg_id)
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    consumer = DefaultMQPushConsumer(
        "G",
        kafka_bootstrap,
        consume_from_where=ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET,
        **common,
    )
    consumer.subscribe("T")
    consumer.register_message_listener(listener)
    with DefaultMQProducer("P", kafka_bootstrap, **common) as producer:
        ids = [producer.send(Message("T", body=f"m{n}".encode())).msg_id for n in range(5)]
        consumer.start()
        try:
            wait_until(lambda: succeeded >= set(ids), 60)
        finally:
            consumer.shutdown()
            forwarder.shutdown()
    stats = (producer.tracer.stats(), consumer.tracer.stats(), forwarder.tracer.stats())
    assert all(s.dropped == 0 for s in stats), stats
    # not told the clients' table: retries are judged against the due times they recorded
    policy = AuditPolicy(now_ms=int(time.time() * 1000))
    report = run_batch(spark, AuditJob(client, policy), tmp_path)
    (entry,) = report["groups"]
    assert (entry["group"], entry["topic"]) == ("G", "T")
    assert entry["produced"] == 5
    assert entry["succeeded_first_time"] == 4
    assert entry["retried_histogram"] == {"1": 1}
    assert (entry["lost"], entry["parked"], entry["dead_lettered"]) == (0, 0, 0)
    assert entry["forwards"] == 1 and entry["lateness_ms"]["max"] is not None
    assert (entry["retries_judged"], entry["ladder_violations"]) == (1, 0)
