"""Batch audit throughput: rows per second of ``rmqcompat audit`` (Spark, local[2]) vs a
raw confluent-kafka read of the same topic, in the same run.

Rows: the trace events the audit reads, one row each once decoded. A batch audit scans
one topic, the namespace's trace topic (its lag figure reads committed offsets and
watermarks, no records); the raw read reads exactly the records that hold those events.

The trace topic of a fresh namespace is filled with ``--messages`` messages' events
(single-object Avro, packed into trace records as the SDK's sink packs them: up to
200 events a record, the buffer drained 5,000 events at a time): every message
published and consumed, one in ten failing once (consume, send-back, forward, consume
again), one in a hundred dead-lettered; about 2.3 events per message. Then, ``--runs``
times, alternating:

- raw: one ``Consumer`` reads every record of the topic (``consume(1000)``, touching each
  value), from the first offset to the end; its rate is the events those records hold
  per second;
- cli: ``rmqcompat audit --master local[2]`` as a new process, timed from start to exit:
  what a user waits for (Python and pyspark imports, JVM start, the connector's jars
  (Ivy resolves them on the first start only), Spark's ``kafka`` source, decoding,
  every figure, ``report.json``, the outcomes Parquet, the charts, the lag query,
  Spark's stop);
- fixed: the same command on a namespace whose trace topic is empty: the cost that does
  not depend on the rows (start-up, planning, Spark jobs over nothing, charts);
- warm: :func:`rmqcompat.spark.job.run_batch` on a SparkSession this process keeps and
  has already run ``--warmup`` (untimed) audits on: the audit work itself, without
  start-up or Python worker start; the JVM compiles Spark's generated code over several
  runs, so more warm-up runs come closer to its steady state.

Before the runs, one untimed ``rmqcompat audit`` of the empty topic writes the class
archive its later starts map (:mod:`rmqcompat.spark.class_archive`), as a user's first
audit does once (that audit takes some 20 s longer).

Figures: raw, cli and warm as rows / wall time; fixed in seconds; the per-row rate of
the new process as rows / (cli - fixed). The script prints every run, then the medians
and their ratios to raw (issue target: audit >= 150k rows/s on local[2]). Every audit
is checked (every message produced, no unreadable record).

    python benchmarks/audit.py [--messages 100000] [--runs 3] [--warmup 1]
        [--bootstrap-servers h:p]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench_broker import add_broker_options, broker
from confluent_kafka import Consumer, Producer, TopicPartition

from rmqcompat.cache import cache_root
from rmqcompat.config import ClientConfig
from rmqcompat.message import MessageExt
from rmqcompat.spark import build_session
from rmqcompat.spark.audit import AuditPolicy
from rmqcompat.spark.job import AuditJob, run_batch
from rmqcompat.topics.naming import TRACE_TOPIC, to_kafka_topic
from rmqcompat.topics.provision import ensure_topics
from rmqcompat.topics.spec import TopologySpec
from rmqcompat.trace import Emitter, TraceRecord, encode
from rmqcompat.trace.batch import pack
from rmqcompat.trace.sink import DRAIN_PASS

GROUP, TOPIC = "BenchGroup", "BenchTopic"


def fill(client: ClientConfig, messages: int) -> tuple[int, int]:
    """Write the events of ``messages`` messages to the trace topic; return the count of
    events and of records."""
    _trace_topic(client)
    topic = to_kafka_topic(TRACE_TOPIC, client.namespace)
    producer = Producer(client.librdkafka("producer", **{"linger.ms": 50}))
    now = [time.time_ns() // 1_000_000 - 3_600_000]
    emit = Emitter("bench@1@audit", client.namespace, lambda: now[0])
    written = records = 0
    drained: list[TraceRecord] = []
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
        drained += events
        if len(drained) >= DRAIN_PASS or n == messages - 1:
            for value, count in pack([[encode(event) for event in drained]]):
                _produce(producer, topic, value)
                written, records = written + count, records + 1
            drained = []
    producer.flush()
    return written, records


def _produce(producer: Producer, topic: str, value: bytes) -> None:
    while True:
        try:
            producer.produce(topic, value)
            return
        except BufferError:
            producer.poll(0.05)


def raw(client: ClientConfig, events: int, expected: int) -> float:
    """Events per second of reading the ``expected`` records holding ``events``."""
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
    return events / elapsed


def _trace_topic(client: ClientConfig) -> None:
    ensure_topics(client.librdkafka("admin"), {TRACE_TOPIC: TopologySpec().trace}, client.namespace)


def _check(report: dict[str, Any], messages: int) -> None:
    produced = [entry["produced"] for entry in report["groups"]]
    unreadable = report["trace_records_unreadable"]
    if produced != ([messages] if messages else []) or unreadable:
        raise SystemExit(f"audit is wrong: produced {produced}, {unreadable} unreadable")


def cli(client: ClientConfig, master: str, messages: int, out: Path) -> float:
    """Seconds from starting ``rmqcompat audit`` to its exit; checks its report."""
    command = [sys.executable, "-m", "rmqcompat.cli.main"]
    command += ["--bootstrap-servers", client.bootstrap_servers, "--namespace", client.namespace]
    command += ["audit", "--master", master, "--out", str(out)]
    out.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    # run outside the source checkout, so its folders do not shadow the installed package
    subprocess.run(command, check=True, cwd=out.parent, stdout=subprocess.DEVNULL)
    elapsed = time.perf_counter() - started
    _check(json.loads((out / "report.json").read_text("utf-8")), messages)
    return elapsed


def warm(spark: Any, client: ClientConfig, messages: int, out: Path) -> float:
    """Seconds of :func:`run_batch` on the already started ``spark``."""
    job = AuditJob(client, AuditPolicy(now_ms=time.time_ns() // 1_000_000))
    started = time.perf_counter()
    report = run_batch(spark, job, out)
    elapsed = time.perf_counter() - started
    _check(report, messages)
    return elapsed


def _median(values: list[float]) -> float:
    return statistics.median(values)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1, help="untimed warm audits first")
    parser.add_argument("--master", default="local[2]")
    add_broker_options(parser)
    args = parser.parse_args()
    with broker(args) as bootstrap:
        client = ClientConfig(bootstrap, f"bench{uuid.uuid4().hex[:8]}")
        empty = ClientConfig(bootstrap, f"bench{uuid.uuid4().hex[:8]}")
        _trace_topic(empty)
        started = time.perf_counter()
        rows, records = fill(client, args.messages)
        took = time.perf_counter() - started
        print(
            f"filled {rows} trace events in {records} records ({args.messages} messages)"
            f" in {took:.1f} s"
        )
        spark = build_session("rmqcompat-bench", args.master, ivy_dir=cache_root() / "ivy")
        spark.sparkContext.setLogLevel("ERROR")
        with tempfile.TemporaryDirectory() as tmp:  # Python workers started, JIT warm
            for n in range(args.warmup):
                warm(spark, client, args.messages, Path(tmp) / str(n))
            cli(empty, args.master, 0, Path(tmp) / "class-archive")
        figures: dict[str, list[float]] = {"raw": [], "cli": [], "fixed": [], "warm": []}
        with tempfile.TemporaryDirectory() as tmp:
            for run in range(args.runs):
                out = Path(tmp) / f"run{run}"
                figures["raw"].append(raw(client, rows, records))
                figures["cli"].append(cli(client, args.master, args.messages, out / "cli"))
                figures["fixed"].append(cli(empty, args.master, 0, out / "fixed"))
                figures["warm"].append(rows / warm(spark, client, args.messages, out / "warm"))
                _print_run(run, rows, figures)
        spark.stop()
    _print_medians(args.master, rows, figures)


def _print_run(run: int, rows: int, figures: dict[str, list[float]]) -> None:
    cli_s, fixed_s = figures["cli"][-1], figures["fixed"][-1]
    print(
        f"run {run + 1}: raw {figures['raw'][-1]:,.0f} rows/s; cli {rows / cli_s:,.0f} rows/s "
        f"({cli_s:.1f} s), fixed {fixed_s:.1f} s, per row {rows / max(cli_s - fixed_s, 1e-3):,.0f}"
        f" rows/s; warm {figures['warm'][-1]:,.0f} rows/s",
        flush=True,
    )


def _print_medians(master: str, rows: int, figures: dict[str, list[float]]) -> None:
    raw_rate = _median(figures["raw"])
    cli_s, fixed_s = _median(figures["cli"]), _median(figures["fixed"])
    rates = {
        "cli (end to end)": rows / cli_s,
        "per row (cli - fixed)": rows / max(cli_s - fixed_s, 1e-3),
        "warm session": _median(figures["warm"]),
    }
    print(f"median raw {raw_rate:,.0f} rows/s; cli {cli_s:.1f} s, fixed {fixed_s:.1f} s")
    for name, rate in rates.items():
        print(f"  audit ({master}) {name}: {rate:,.0f} rows/s, audit/raw {rate / raw_rate:.3f}")
    print(f"rows: {rows:,} trace events (in the records of the one topic the audit scans)")
    print("target: audit >= 150,000 rows/s")


if __name__ == "__main__":
    main()
