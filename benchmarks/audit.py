"""Batch audit throughput: trace rows per second of ``rmqcompat audit`` (Spark, local[2])
vs a raw confluent-kafka read of the same trace topic, in the same run.

The trace topic of a fresh namespace is filled with ``--messages`` messages' events
(single-object Avro, as the SDK writes them): every message published and consumed,
one in ten failing once (consume, send-back, forward, consume again), one in a hundred
dead-lettered; about 2.4 events per message. Then, ``--runs`` times, alternating:

- raw: one ``Consumer`` reads every record of the topic (``consume(1000)``, touching each
  value), from the first offset to the end;
- audit: :func:`rmqcompat.spark.job.run_batch` on one SparkSession (``--master``,
  default ``local[2]``): Spark's ``kafka`` source, fastavro decoding, every figure,
  ``report.json``, the outcomes Parquet and the charts. Session start-up is not timed.

Each figure is trace records / wall time; the script prints every run, the medians and
audit/raw (issue target: audit >= 150k rows/s on local[2]).

    python benchmarks/audit.py [--messages 200000] [--runs 3] [--bootstrap-servers h:p]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from bench_broker import add_broker_options, broker
from confluent_kafka import Consumer, Producer, TopicPartition

from rmqcompat.config import ClientConfig
from rmqcompat.devbroker.apache_kafka import cache_root
from rmqcompat.message import MessageExt
from rmqcompat.spark import build_session
from rmqcompat.spark.audit import AuditPolicy
from rmqcompat.spark.job import AuditJob, run_batch
from rmqcompat.topics.naming import TRACE_TOPIC, to_kafka_topic
from rmqcompat.topics.provision import ensure_topics
from rmqcompat.topics.spec import TopologySpec
from rmqcompat.trace import Emitter, encode

GROUP, TOPIC = "BenchGroup", "BenchTopic"


def fill(client: ClientConfig, messages: int) -> int:
    """Write the events of ``messages`` messages to the trace topic; return the count."""
    ensure_topics(client.librdkafka("admin"), {TRACE_TOPIC: TopologySpec().trace}, client.namespace)
    topic = to_kafka_topic(TRACE_TOPIC, client.namespace)
    producer = Producer(client.librdkafka("producer", **{"linger.ms": 50}))
    now = [time.time_ns() // 1_000_000 - 3_600_000]
    emit = Emitter("bench@1@audit", client.namespace, lambda: now[0])
    written = 0
    for n in range(messages):
        now[0] += 1
        msg_id = f"M{n:010d}"
        msg = MessageExt(TOPIC, b"", msg_id, 0, n, now[0], now[0], 0, {"TAGS": "a"})
        events = [emit.publish(msg_id, TOPIC, to_kafka_topic(TOPIC, client.namespace), tags="a")]
        if n % 100 == 0:
            events += [emit.consume(msg, GROUP, "EXCEPTION", 1)]
            events += [emit.dead_letter(msg, GROUP, "%DLQ%" + GROUP, "max reconsume times")]
        elif n % 10 == 0:
            events += [emit.consume(msg, GROUP, "RECONSUME_LATER", 1)]
            events += [emit.send_back(msg, GROUP, 3, now[0] + 10_000, "%SCHEDULE%10s")]
            forward = emit.forward(
                msg_id,
                TOPIC,
                "%RETRY%" + GROUP,
                "ns.rmq.delay.10s",
                0,
                n,
                now[0] + 10_000,
                reconsume_times=1,
                delay_level=3,
            )
            forward["timestamp_ms"] = now[0] + 10_000 + n % 50  # forwarded 0-49 ms late
            events += [forward]
            msg.reconsume_times = 1
            events += [emit.consume(msg, GROUP, "SUCCESS", 1)]
        else:
            events += [emit.consume(msg, GROUP, "SUCCESS", 1)]
        for event in events:
            _produce(producer, topic, encode(event))
        written += len(events)
    producer.flush()
    return written


def _produce(producer: Producer, topic: str, value: bytes) -> None:
    while True:
        try:
            producer.produce(topic, value)
            return
        except BufferError:
            producer.poll(0.05)


def raw(client: ClientConfig, expected: int) -> float:
    topic = to_kafka_topic(TRACE_TOPIC, client.namespace)
    consumer = Consumer(
        client.librdkafka(
            "consumer", **{"group.id": f"raw-{uuid.uuid4().hex}", "enable.auto.commit": False}
        )
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    seen = size = 0
    started = time.perf_counter()
    while seen < expected:
        for record in consumer.consume(1000, 1.0):
            if record.error() is None:
                size += len(record.value() or b"")
                seen += 1
    elapsed = time.perf_counter() - started
    consumer.close()
    return seen / elapsed


def audited(spark: object, client: ClientConfig, rows: int, messages: int, out: Path) -> float:
    job = AuditJob(client, AuditPolicy(now_ms=time.time_ns() // 1_000_000), min_partitions=2)
    started = time.perf_counter()
    report = run_batch(spark, job, out)  # type: ignore[arg-type]
    elapsed = time.perf_counter() - started
    (entry,) = report["groups"]
    if entry["produced"] != messages or report["trace_records_unreadable"]:
        unreadable = report["trace_records_unreadable"]
        raise SystemExit(f"audit is wrong: {entry}, {unreadable} unreadable")
    return rows / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    add_broker_options(parser)
    args = parser.parse_args()
    with broker(args) as bootstrap:
        client = ClientConfig(bootstrap, f"bench{uuid.uuid4().hex[:8]}")
        started = time.perf_counter()
        rows = fill(client, args.messages)
        took = time.perf_counter() - started
        print(f"filled {rows} trace records ({args.messages} messages) in {took:.1f} s")
        spark = build_session("rmqcompat-bench", args.master, ivy_dir=cache_root() / "ivy")
        spark.sparkContext.setLogLevel("ERROR")
        raws, audits = [], []
        with tempfile.TemporaryDirectory() as tmp:
            for run in range(args.runs):
                raws.append(raw(client, rows))
                audits.append(audited(spark, client, rows, args.messages, Path(tmp) / f"run{run}"))
                print(
                    f"run {run + 1}: raw {raws[-1]:,.0f} rows/s, audit {audits[-1]:,.0f} rows/s",
                    flush=True,
                )
        spark.stop()
    raw_median, audit_median = statistics.median(raws), statistics.median(audits)
    print(
        f"median: raw {raw_median:,.0f} rows/s, audit ({args.master}) {audit_median:,.0f} rows/s, "
        f"audit/raw {audit_median / raw_median:.2f} (target: audit >= 150,000 rows/s)"
    )


if __name__ == "__main__":
    main()
