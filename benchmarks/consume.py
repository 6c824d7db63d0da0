"""Success-path throughput: DefaultMQPushConsumer vs a raw confluent-kafka consume loop.

Both sides read the same pre-filled topic (4 partitions, ``--messages`` records of
``--size`` bytes, rmqcompat headers UNIQ_KEY and TAGS on every record), each with a fresh
group from the first offset, alternating, ``--runs`` times. Each figure is messages / time
from the first message handled to the last; the script prints every run, the medians
and the SDK/raw ratio of the medians (issue 25's targets: at batch 1 >= 0.5 with tracing
on, >= 0.6 off; at batch 32 >= 0.8 on, >= 0.9 off).

What each side does per message, at minimum what a real at-least-once app does:

- raw: ``Consumer.consume(500, 1.0)``; per record: check ``error()``, read ``value()``
  and ``headers()``, call ``handle(value, headers)`` (a no-op function); after each
  ``consume()`` call, ``store_offsets`` the next offset of every partition it returned
  (``enable.auto.offset.store=false``); librdkafka auto-commits stored offsets every 5 s.
- sdk: ``DefaultMQPushConsumer`` with its defaults (CLUSTERING, 20 consume threads,
  ``consume_message_batch_max_size`` = ``--batch``, commits every 5 s, subscribed with
  ``"*"`` plus its own retry topic); the listener calls ``handle(msg.body,
  msg.properties)`` per message, counts them and returns CONSUME_SUCCESS at once.
  Everything the SDK does for a message is measured: header decoding into a
  ``MessageExt``, process-queue tracking, the hand-off to a worker thread, ackIndex
  settlement back on the poll thread and smallest-in-flight commits.

    python benchmarks/consume.py [--messages 100000] [--runs 3] [--batch 1] [--trace on|off]
        [--bootstrap h:p]

``--trace`` switches the SDK consumer's trace events (default on, the product default);
``both`` measures the SDK with tracing off then on in every run, beside the same raw run.
Each SDK run also prints the process's CPU time per message over the run (all threads:
the trace thread's included, and less sensitive to a loaded machine than the rate), the
part of it Python's cyclic garbage collector ran, and with tracing on, the trace sink's
counters after shutdown (a dropped event would flatter the rate). On Linux it prints
that time by thread as well (``thread_clock.py``): the poll thread, the listener's
threads, the trace thread and librdkafka's, each summed over the run.

Both sides fetch as the SDK does (``fetch.queue.backoff.ms`` 10 ms, the SDK's
``CONSUMER_DEFAULTS``). With librdkafka's default of 1 s the raw side stalled beyond about
100,000 queued records: ``queued.min.messages`` is checked against the consumer's queue,
which all partitions share under ``consume()``, and every partition then waited a second
for its next fetch (200,000 messages on Apache Kafka, alternating: 598k, 613k and 162k
msg/s with 1 s; 653k, 655k and 573k with 10 ms; 2026-11-26).

Each raw run prints its CPU time per message and how long its reading thread waited for
a CPU: both sides share the machine with the broker, and on a shared machine a run's rate
can fall to a fifth while its CPU per message stays put (the slow raw runs of about 115k
msg/s the issue names were such waits: 2026-11-26). Run it on an otherwise idle host, and
read a run whose wait is a large share of it as the machine's, not the client's.

Without --bootstrap (or RMQCOMPAT_BOOTSTRAP_SERVERS) it starts a dev broker (Apache Kafka
where Java runs, see ``--broker``).
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import threading
import time
import uuid
from typing import Any

from bench_broker import add_broker_options, broker, produce_waiting
from collector_clock import CollectorClock
from confluent_kafka import Consumer, Producer, TopicPartition
from thread_clock import ThreadClock, schedstat_ns

from rmqcompat import properties as props
from rmqcompat.consumer.listener import ConsumeConcurrentlyStatus, ConsumeFromWhere
from rmqcompat.consumer.push_consumer import DefaultMQPushConsumer
from rmqcompat.consumer.wiring import CONSUMER_DEFAULTS
from rmqcompat.message_id import new_message_id
from rmqcompat.topics.naming import to_kafka_topic
from rmqcompat.topics.provision import ensure_topics
from rmqcompat.topics.spec import TopicSpec

NS = "bench"
OVERRIDES = {"session.timeout.ms": 2000, "heartbeat.interval.ms": 200, "fetch.wait.max.ms": 50}
COMMIT_INTERVAL_MS = 5000  # the SDK's persist_consumer_offset_interval
#: Issue 25's SDK/raw targets: [at batch 1?][trace on?].
TARGETS = {True: {True: 0.5, False: 0.6}, False: {True: 0.8, False: 0.9}}


def handle(_body: Any, _headers: Any) -> None:
    """The application's work: nothing, so both sides measure pure overhead."""


def fill(bootstrap: str, topic: str, count: int, size: int, keyed: bool = False) -> None:
    """``keyed``: a distinct key per record, so the 4 partitions fill evenly (the
    sticky partitioner of unkeyed records can put most of them in one)."""
    ensure_topics({"bootstrap.servers": bootstrap}, {topic: TopicSpec(4)}, NS)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    body = b"x" * size
    physical = to_kafka_topic(topic, NS)
    for i in range(count):
        headers = props.to_headers({props.UNIQ_KEY: new_message_id(), props.TAGS: "A"})
        key = str(i).encode() if keyed else None
        produce_waiting(producer, physical, body, key, headers=headers)
    producer.flush()


def raw(bootstrap: str, topic: str, count: int) -> float:
    """Messages a second from the first record read to the last; prints the CPU time a
    message (all threads) and the time the reading thread waited for a CPU."""
    consumer = Consumer(
        {
            **OVERRIDES,
            **CONSUMER_DEFAULTS,  # the SDK's fetch mode: without it, see the module's text
            "bootstrap.servers": bootstrap,
            "group.id": f"raw-{uuid.uuid4().hex}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": True,
            "auto.commit.interval.ms": COMMIT_INTERVAL_MS,
            "enable.auto.offset.store": False,
        }
    )
    consumer.subscribe([to_kafka_topic(topic, NS)])
    seen, start, cpu, waited = 0, 0.0, 0.0, 0.0
    threads = ThreadClock()
    while seen < count:
        records = consumer.consume(500, 1.0)
        if records and not start:
            start, cpu, waited = time.perf_counter(), time.process_time(), _run_queue_wait_s()
            threads.start()
        nexts: dict[tuple[str, int], int] = {}
        for msg in records:
            if msg.error() is None:
                handle(msg.value(), msg.headers())
                nexts[(msg.topic(), msg.partition())] = msg.offset() + 1
                seen += 1
        if nexts:
            consumer.store_offsets(offsets=[TopicPartition(t, p, o) for (t, p), o in nexts.items()])
    elapsed = time.perf_counter() - start
    cpu_us = (time.process_time() - cpu) / count * 1e6
    waited = _run_queue_wait_s() - waited
    threads.stop()
    print(
        f"  raw: CPU {cpu_us:.1f} us/msg; waited for a CPU {waited / elapsed:.0%} of the run",
        flush=True,
    )
    if per_thread := threads.per_message_us(count):
        print(f"    per thread (us/msg): {per_thread}", flush=True)
    consumer.close()
    return count / elapsed


def _run_queue_wait_s() -> float:
    """Seconds the calling thread was ready to run but waited for a CPU (Linux schedstat;
    0 elsewhere): on a shared machine a run that waited long measures the machine."""
    stats = schedstat_ns(threading.get_native_id())
    return 0.0 if stats is None else stats[1] / 1e9


def start_sdk(
    bootstrap: str, topic: str, listener: Any, *, batch: int = 1, trace: bool = False
) -> DefaultMQPushConsumer:
    """A started push consumer of a new group on ``topic``, from its first offset."""
    consumer = DefaultMQPushConsumer(
        f"sdk-{uuid.uuid4().hex[:12]}",
        bootstrap_servers=bootstrap,
        namespace=NS,
        kafka_config=OVERRIDES,
        consume_from_where=ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET,
        consume_message_batch_max_size=batch,
        trace_enabled=trace,
    )
    consumer.subscribe(topic)
    consumer.register_message_listener(listener)
    consumer.start()
    return consumer


def sdk(bootstrap: str, topic: str, count: int, batch: int, trace: bool) -> float:
    """Messages a second from the first listener call to the last; prints the CPU time a
    message (first call to last) and the trace counters."""
    done = threading.Event()
    counter = itertools.count(1)  # next() is atomic under the GIL: no lock per message
    start, cpu = [0.0], [0.0]

    collector, threads = CollectorClock(), ThreadClock()

    def listener(msgs: list[Any], _ctx: Any) -> ConsumeConcurrentlyStatus:
        if not start[0]:
            start[0], cpu[0] = time.perf_counter(), time.process_time()
            collector.start()
            threads.start()
        for msg in msgs:
            handle(msg.body, msg.properties)
            if next(counter) == count:
                done.set()
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    consumer = start_sdk(bootstrap, topic, listener, batch=batch, trace=trace)
    done.wait()
    elapsed = time.perf_counter() - start[0]
    cpu_us = (time.process_time() - cpu[0]) / count * 1e6
    collector.stop()
    threads.stop()  # before the shutdown ends the consumer's threads
    gc_us = collector.seconds / count * 1e6
    consumer.shutdown()
    stats = consumer.tracer.stats()
    traced = f", trace written {stats.written:,} dropped {stats.dropped:,}" if trace else ""
    name = "on" if trace else "off"
    print(
        f"  sdk trace {name}: CPU {cpu_us:.1f} us/msg (collector {gc_us:.1f}){traced}", flush=True
    )
    if per_thread := threads.per_message_us(count):
        print(f"    per thread (us/msg): {per_thread}", flush=True)
    return count / elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=1, help="consume_message_batch_max_size")
    parser.add_argument("--only", choices=["raw", "sdk"], help="measure one side (profiling)")
    parser.add_argument(
        "--trace",
        choices=["on", "off", "both"],
        default="on",
        help="SDK trace events (default on; both: off then on in each run)",
    )
    add_broker_options(parser)
    args = parser.parse_args()
    print(f"trace {args.trace}, batch {args.batch}", flush=True)
    with broker(args) as bootstrap:
        topic = f"bench-{uuid.uuid4().hex[:8]}"
        fill(bootstrap, topic, args.messages, args.size)
        traces = {"off": [False], "on": [True], "both": [False, True]}[args.trace]
        raws: list[float] = []
        sdks: dict[bool, list[float]] = {trace: [] for trace in traces}
        for run in range(args.runs):
            if args.only != "sdk":
                raws.append(raw(bootstrap, topic, args.messages))
            if args.only != "raw":
                for trace, rates in sdks.items():
                    rates.append(sdk(bootstrap, topic, args.messages, args.batch, trace))
            figures = [f"raw {raws[-1]:,.0f} msg/s"] if raws else []
            figures += [f"{_name(t)} {v[-1]:,.0f} msg/s" for t, v in sdks.items() if v]
            print(f"run {run + 1}: " + "  ".join(figures) + f"; load {_load()}", flush=True)
        for trace, rates in sdks.items():
            target = TARGETS[args.batch == 1][trace]
            if raws and rates:
                r, s = statistics.median(raws), statistics.median(rates)
                print(
                    f"median: raw {r:,.0f} msg/s  {_name(trace)} {s:,.0f} msg/s  ratio {s / r:.2f}"
                    f" (target >= {target})"
                )
        if len(sdks) == 2 and all(sdks.values()):
            on, off = (statistics.median(sdks[t]) for t in (True, False))
            print(f"trace on / trace off: {on / off:.2f}")


def _name(trace: bool) -> str:
    return "sdk trace on" if trace else "sdk trace off"


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()
