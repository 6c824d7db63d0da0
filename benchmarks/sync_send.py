"""Synchronous send: rmqcompat ``send`` vs raw confluent-kafka ``produce`` + ``flush``.

One message at a time, 200-byte bodies, one partition, default settings on the SDK side
(idempotence, acks=all, tracing on unless ``--trace off``). The raw client runs twice per
round, with ``linger.ms`` 0 (the target's reference) and 5 (the SDK's batching default);
both wait for each delivery with ``flush()``, as a synchronous raw send does.

- one thread: sends/s, p50 and p99 of each send's latency, for every client;
- ``--threads N`` threads sending synchronously at once through one SDK producer: sends/s
  and the ratio to the one-thread rate (does the linger-free lane still batch?).

Rounds alternate the clients; prints the medians over rounds and the ratios SDK / raw.

    python benchmarks/sync_send.py [-n 2000] [--rounds 3] [--threads 8] [--trace on|off]
        [--bootstrap-servers HOST:PORT]

Without ``--bootstrap-servers`` it starts its own dev broker.
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from bench_broker import add_broker_options, broker
from confluent_kafka import Producer

from rmqcompat.message import Message
from rmqcompat.producer import DefaultMQProducer
from rmqcompat.producer.settings import PRODUCER_DEFAULTS
from rmqcompat.topics.naming import to_kafka_topic
from rmqcompat.topics.provision import ensure_topics
from rmqcompat.topics.spec import TopicSpec

BODY = b"x" * 200


@dataclass(frozen=True)
class Figures:
    rate: float
    p50_ms: float
    p99_ms: float


def timed(send: Callable[[], object], count: int) -> Figures:
    """Call ``send`` ``count`` times one after another; its rate and latency percentiles."""
    latencies = []
    start = time.perf_counter()
    for _ in range(count):
        began = time.perf_counter()
        send()
        latencies.append(time.perf_counter() - began)
    elapsed = time.perf_counter() - start
    latencies.sort()
    return Figures(
        count / elapsed,
        latencies[len(latencies) // 2] * 1e3,
        latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1e3,
    )


def raw_run(bootstrap: str, topic: str, count: int, linger_ms: int) -> Figures:
    producer = Producer(
        {**PRODUCER_DEFAULTS, "bootstrap.servers": bootstrap, "linger.ms": linger_ms}
    )
    physical = to_kafka_topic(topic)
    failures: list[object] = []

    def on_delivery(err: object, _msg: object) -> None:
        if err is not None:
            failures.append(err)

    def send() -> None:
        producer.produce(physical, BODY, on_delivery=on_delivery)
        producer.flush()

    send()  # connect and learn the topic outside the clock
    figures = timed(send, count)
    if failures:
        raise SystemExit(f"{len(failures)} raw sends failed: {failures[0]}")
    return figures


def raw_threads_run(bootstrap: str, topic: str, count: int, threads: int) -> float:
    """The raw client's multi-thread synchronous send at ``linger.ms=0``: each thread
    produces and waits for its own delivery report, which a poll thread serves (``flush``
    from several threads would wait for each other's records)."""
    producer = Producer({**PRODUCER_DEFAULTS, "bootstrap.servers": bootstrap, "linger.ms": 0})
    physical = to_kafka_topic(topic)
    producer.produce(physical, BODY)
    producer.flush()
    stopped = threading.Event()

    def serve_reports() -> None:
        while not stopped.is_set():
            producer.poll(0.05)

    def sender() -> None:
        start_line.wait()
        for _ in range(count):
            delivered = threading.Event()
            producer.produce(physical, BODY, on_delivery=lambda _e, _m, d=delivered: d.set())
            delivered.wait()

    start_line = threading.Barrier(threads + 1)
    poller = threading.Thread(target=serve_reports)
    poller.start()
    try:
        return _run_threads(sender, threads, count, start_line)
    finally:
        stopped.set()
        poller.join()


def _run_threads(
    sender: Callable[[], None], threads: int, count: int, start_line: threading.Barrier
) -> float:
    workers = [threading.Thread(target=sender) for _ in range(threads)]
    for worker in workers:
        worker.start()
    start_line.wait()
    start = time.perf_counter()
    for worker in workers:
        worker.join()
    return threads * count / (time.perf_counter() - start)


def sdk_run(bootstrap: str, topic: str, count: int, trace: bool) -> Figures:
    with DefaultMQProducer("BenchSyncPG", bootstrap, trace_enabled=trace) as producer:
        producer.send(Message(topic, BODY))
        return timed(lambda: producer.send(Message(topic, BODY)), count)


def sdk_threads_run(bootstrap: str, topic: str, count: int, threads: int, trace: bool) -> float:
    """``threads`` threads each sending ``count`` messages synchronously; total sends/s."""
    with DefaultMQProducer("BenchSyncPG", bootstrap, trace_enabled=trace) as producer:
        producer.send(Message(topic, BODY))
        start_line = threading.Barrier(threads + 1)

        def sender() -> None:
            start_line.wait()
            for _ in range(count):
                producer.send(Message(topic, BODY))

        return _run_threads(sender, threads, count, start_line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--messages", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--trace", choices=["on", "off"], default="on")
    add_broker_options(parser)
    args = parser.parse_args()
    trace = args.trace == "on"
    print(f"trace {args.trace}; load average {_load()}", flush=True)
    runs: dict[str, list[Figures]] = {"raw linger 0": [], "raw linger 5": [], "sdk send": []}
    threaded: list[float] = []
    raw_threaded: list[float] = []
    with broker(args) as bootstrap:
        topic = f"bench-sync-{uuid.uuid4().hex[:8]}"
        ensure_topics({"bootstrap.servers": bootstrap}, {topic: TopicSpec(1)})
        for round_no in range(1, args.rounds + 1):
            runs["raw linger 0"].append(raw_run(bootstrap, topic, args.messages, 0))
            runs["raw linger 5"].append(raw_run(bootstrap, topic, args.messages, 5))
            runs["sdk send"].append(sdk_run(bootstrap, topic, args.messages, trace))
            threaded.append(
                sdk_threads_run(bootstrap, topic, args.messages // 2, args.threads, trace)
            )
            raw_threaded.append(raw_threads_run(bootstrap, topic, args.messages // 2, args.threads))
            line = ", ".join(
                f"{name} {figs[-1].rate:,.0f}/s p99 {figs[-1].p99_ms:.2f} ms"
                for name, figs in runs.items()
            )
            print(
                f"round {round_no}: {line}, {args.threads} threads: sdk {threaded[-1]:,.0f}/s,"
                f" raw linger 0 {raw_threaded[-1]:,.0f}/s"
            )
    medians = {
        name: Figures(
            *(
                statistics.median(getattr(f, field) for f in figs)
                for field in Figures.__dataclass_fields__
            )
        )
        for name, figs in runs.items()
    }
    for name, figures in medians.items():
        print(
            f"median {name:13s} {figures.rate:9,.0f} sends/s  p50 {figures.p50_ms:.2f} ms"
            f"  p99 {figures.p99_ms:.2f} ms"
        )
    sdk, raw = medians["sdk send"], medians["raw linger 0"]
    threads_median, raw_threads_median = (
        statistics.median(threaded),
        statistics.median(raw_threaded),
    )
    print(f"median sdk {args.threads} threads          {threads_median:9,.0f} sends/s")
    print(f"median raw linger 0 {args.threads} threads {raw_threads_median:9,.0f} sends/s")
    print(f"ratio sdk/raw linger 0 (sends/s): {sdk.rate / raw.rate:.2f}")
    print(f"ratio sdk/raw linger 0 (p99):     {sdk.p99_ms / raw.p99_ms:.2f}")
    print(f"ratio {args.threads} threads / 1 thread (sdk): {threads_median / sdk.rate:.2f}")
    print(
        f"ratio {args.threads} threads / 1 thread (raw linger 0): "
        f"{raw_threads_median / raw.rate:.2f}"
    )
    print(
        f"ratio sdk/raw linger 0 ({args.threads} threads): "
        f"{threads_median / raw_threads_median:.2f}"
    )
    print(f"load average after: {_load()}")


def _load() -> str:
    return " ".join(f"{load:.2f}" for load in os.getloadavg())


if __name__ == "__main__":
    main()
