"""Producer throughput: rmqcompat ``send_async`` vs raw confluent-kafka ``produce``.

Both sides use the same librdkafka settings (``PRODUCER_DEFAULTS``: idempotence,
acks=all, linger.ms=5; librdkafka's default batch size), the same topic (4 partitions),
200-byte bodies and wait for every delivery report before the clock stops.

- SDK: ``send_async(Message(topic, body))`` per message, keeping every returned future
  (as an application that checks outcomes does); headers ``UNIQ_KEY`` and
  ``BORN_TIMESTAMP`` as the SDK writes them; clock stops when ``shutdown()`` returned
  (every outcome known).
- raw: ``Producer.produce(topic, body, headers=..., on_delivery=cb)`` with the same two
  headers built per message (a 32-hex-digit id from a counter and the epoch-ms born time,
  so both sides move the same bytes) and a delivery callback that records failures (any
  real application needs the outcome); ``poll(0)`` after each produce, as confluent-kafka
  recommends; clock stops after ``flush()``.

Runs alternate raw/SDK; prints msgs/s per run, the medians and the ratio SDK / raw, and
the load average before and after (the machine's other work moves both sides' figures).
Each run also prints the process's CPU time per message over the run (all threads,
librdkafka's included): the steadiest figure on a shared machine; and for the SDK the
part of it Python's cyclic garbage collector ran (it walks the futures the run keeps).

    python benchmarks/produce.py [-n 200000] [--runs 5] [--trace on|off|both]
        [--bootstrap-servers HOST:PORT]

``--trace`` switches the SDK producer's trace events (default on, the product default);
``both`` runs the SDK with tracing off and then on in every run and prints their ratio
(the cost of tracing, measured beside the same raw runs).

Without ``--bootstrap-servers`` it starts its own dev broker.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import uuid

from bench_broker import add_broker_options, broker
from collector_clock import CollectorClock
from confluent_kafka import Producer

from rmqcompat.message import Message
from rmqcompat.producer import DefaultMQProducer
from rmqcompat.producer.settings import PRODUCER_DEFAULTS
from rmqcompat.topics.naming import to_kafka_topic
from rmqcompat.topics.provision import ensure_topics
from rmqcompat.topics.spec import TopicSpec

BODY = b"x" * 200


def sdk_run(bootstrap: str, topic: str, count: int, trace: bool) -> float:
    with DefaultMQProducer("BenchPG", bootstrap, trace_enabled=trace) as producer:
        producer.send(Message(topic, BODY))  # connect and learn the topic outside the clock
        collector = CollectorClock()
        collector.start()
        start, cpu = time.perf_counter(), time.process_time()
        futures = [producer.send_async(Message(topic, BODY)) for _ in range(count)]
        producer.shutdown()
        elapsed = time.perf_counter() - start
        cpu_us = (time.process_time() - cpu) / count * 1e6
        collector.stop()
    gc_us = collector.seconds / count * 1e6
    print(
        f"  sdk trace {_name(trace)}: CPU {cpu_us:.1f} us/msg (collector {gc_us:.1f})", flush=True
    )
    failed = sum(1 for f in futures if f.exception() is not None)
    if failed:
        raise SystemExit(f"{failed} SDK sends failed")
    return count / elapsed


def raw_run(bootstrap: str, topic: str, count: int) -> float:
    producer = Producer({**PRODUCER_DEFAULTS, "bootstrap.servers": bootstrap})
    failures = []

    def on_delivery(err, _msg) -> None:
        if err is not None:
            failures.append(err)

    physical = to_kafka_topic(topic)
    producer.produce(physical, BODY)
    producer.flush()
    id_prefix = uuid.uuid4().hex[:16].upper()
    start, cpu = time.perf_counter(), time.process_time()
    for seq in range(count):
        headers = [
            ("UNIQ_KEY", f"{id_prefix}{seq:016X}".encode()),
            ("BORN_TIMESTAMP", str(time.time_ns() // 1_000_000).encode()),
        ]
        while True:
            try:
                producer.produce(physical, BODY, on_delivery=on_delivery, headers=headers)
                break
            except BufferError:
                producer.poll(0.001)
        producer.poll(0)
    producer.flush()
    elapsed = time.perf_counter() - start
    print(f"  raw: CPU {(time.process_time() - cpu) / count * 1e6:.1f} us/msg", flush=True)
    if failures:
        raise SystemExit(f"{len(failures)} raw sends failed: {failures[0]}")
    return count / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--messages", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--trace",
        choices=["on", "off", "both"],
        default="on",
        help="SDK trace events (default on); both: off and on in every run",
    )
    add_broker_options(parser)
    args = parser.parse_args()
    modes = {"on": [True], "off": [False], "both": [False, True]}[args.trace]
    print(f"trace {args.trace}; load average {_load()}", flush=True)
    with broker(args) as bootstrap:
        topic = f"bench-{uuid.uuid4().hex[:8]}"
        ensure_topics({"bootstrap.servers": bootstrap}, {topic: TopicSpec(4)})
        sdk: dict[bool, list[float]] = {trace: [] for trace in modes}
        raw: list[float] = []
        for run in range(1, args.runs + 1):
            raw.append(raw_run(bootstrap, topic, args.messages))
            for trace in modes:
                sdk[trace].append(sdk_run(bootstrap, topic, args.messages, trace))
            rates = ", ".join(f"sdk trace {_name(t)} {sdk[t][-1]:,.0f}" for t in modes)
            print(f"run {run}: raw produce {raw[-1]:,.0f} msgs/s, {rates}", flush=True)
    raw_median = statistics.median(raw)
    print(f"median raw produce:    {raw_median:,.0f} msgs/s ({args.messages} x 200 B)")
    for trace in modes:
        median = statistics.median(sdk[trace])
        print(f"median sdk send_async, trace {_name(trace)}: {median:,.0f} msgs/s")
        print(f"ratio sdk/raw, trace {_name(trace)}:      {median / raw_median:.2f}")
    if len(modes) == 2:
        on, off = statistics.median(sdk[True]), statistics.median(sdk[False])
        print(f"trace on / trace off: {on / off:.2f}")
    print(f"load average after:    {_load()}")


def _name(trace: bool) -> str:
    return "on" if trace else "off"


def _load() -> str:
    return " ".join(f"{load:.2f}" for load in os.getloadavg())


if __name__ == "__main__":
    main()
