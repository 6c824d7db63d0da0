"""Consumer memory with a large backlog: the resident set size (RSS) of a push consumer at
the default flow-control thresholds, against a raw confluent-kafka consumer of the same
backlog.

One topic of 4 partitions is filled with ``--messages`` records (default 1,000,000) of
``--size`` bytes (default 200), the headers a producer writes. Each side then runs in a
fresh child process (so neither inherits the other's heap) that samples its own RSS
(``/proc/self/statm``) every 20 ms; figures are megabytes above the child's baseline,
read after its imports and before its Kafka client exists.

- SDK, held: ``DefaultMQPushConsumer`` with its defaults (``pull_threshold_for_queue``
  1,000 messages and ``pull_threshold_size_for_queue`` 100 MiB per partition, 20 listener
  threads, librdkafka's default prefetch) and a listener that blocks: the consumer
  fetches until flow control pauses every partition, and holds that for
  ``--hold-seconds``. Reported: peak RSS, messages in flight (the process queues) and the
  partitions paused at the end of the hold.
- SDK, drain: the listener is released and the whole backlog is consumed (no-op
  listener); reported: peak RSS over the hold and the drain, and the drain's rate.
- raw: ``consume.py``'s raw loop (a ``Consumer`` reading value and headers, offsets
  stored) over the whole backlog; reported: peak RSS and rate.

Flow control bounds what the SDK holds in Python: at most the thresholds per partition
(plus up to one fetch above them, and what the listener threads hold). librdkafka's own
prefetch (``queued.max.messages.kbytes``, 64 MiB by default) comes on top, for both sides.

    python benchmarks/consumer_rss.py [--messages 1000000] [--size 200] [--hold-seconds 10]
                                      [--bootstrap-servers HOST:PORT]

Without ``--bootstrap-servers`` it starts its own dev broker.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import threading
import time
import uuid
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from bench_broker import add_broker_options, broker
from consume import fill, handle, raw, start_sdk

_PAGE = os.sysconf("SC_PAGE_SIZE")
_SAMPLE_S = 0.02
_MB = 1_000_000


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * _PAGE


class PeakRss:
    """Samples this process's RSS on a thread; ``peak`` is the highest seen since start."""

    def __init__(self) -> None:
        self.baseline = rss_bytes()
        self.peak = self.baseline
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(_SAMPLE_S):
            self.peak = max(self.peak, rss_bytes())

    def above_baseline_mb(self) -> float:
        return (max(self.peak, rss_bytes()) - self.baseline) / _MB

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def sdk_side(bootstrap: str, topic: str, count: int, hold_s: float, out: Connection) -> None:
    from rmqcompat.consumer.listener import ConsumeConcurrentlyStatus

    rss = PeakRss()
    gate, done = threading.Event(), threading.Event()
    consumed = [0]
    lock = threading.Lock()

    def listener(msgs: list[Any], _ctx: Any) -> ConsumeConcurrentlyStatus:
        gate.wait()
        for msg in msgs:
            handle(msg.body, msg.properties)
        with lock:
            consumed[0] += len(msgs)
            if consumed[0] >= count:
                done.set()
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    consumer = start_sdk(bootstrap, topic, listener)  # defaults, trace off
    time.sleep(hold_s)
    stats = consumer.stats()
    held = {
        "held_mb": rss.above_baseline_mb(),
        "in_flight": sum(int(s["count"]) for s in stats.values()),
        "paused": sum(bool(s["paused"]) for s in stats.values()),
        "partitions": len(stats),
    }
    started = time.perf_counter()
    gate.set()
    finished = done.wait(600)
    elapsed = time.perf_counter() - started
    consumer.shutdown()
    rss.stop()
    out.send({**held, "peak_mb": rss.above_baseline_mb(), "rate": count / elapsed, "ok": finished})


def raw_side(bootstrap: str, topic: str, count: int, _hold_s: float, out: Connection) -> None:
    rss = PeakRss()
    rate = raw(bootstrap, topic, count)  # consume.py's raw loop, as measured there
    rss.stop()
    out.send({"peak_mb": rss.above_baseline_mb(), "rate": rate, "ok": True})


Side = Callable[[str, str, int, float, Connection], None]


def in_child(side: Side, *args: Any) -> dict[str, Any]:
    """Run ``side`` in a fresh interpreter and return what it reports."""
    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=side, args=(*args, send))
    child.start()
    result: dict[str, Any] = receive.recv()
    child.join()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--hold-seconds", type=float, default=10.0)
    add_broker_options(parser)
    args = parser.parse_args()
    with broker(args) as bootstrap:
        topic = f"rss-{uuid.uuid4().hex[:8]}"
        started = time.perf_counter()
        fill(bootstrap, topic, args.messages, args.size)  # 4 partitions
        print(f"filled {args.messages:,} x {args.size} B in {time.perf_counter() - started:.0f} s")
        sdk = in_child(sdk_side, bootstrap, topic, args.messages, args.hold_seconds)
        raw = in_child(raw_side, bootstrap, topic, args.messages, args.hold_seconds)
    print(
        f"SDK held ({args.hold_seconds:.0f} s, listener blocked): RSS +{sdk['held_mb']:.0f} MB,"
        f" {sdk['in_flight']:,} messages in flight, {sdk['paused']} of {sdk['partitions']}"
        " partitions paused"
    )
    print(
        f"SDK drain of the backlog: peak RSS +{sdk['peak_mb']:.0f} MB,"
        f" {sdk['rate']:,.0f} msgs/s{'' if sdk['ok'] else ' (NOT FINISHED)'}"
    )
    print(f"raw read of the backlog: peak RSS +{raw['peak_mb']:.0f} MB, {raw['rate']:,.0f} msgs/s")


if __name__ == "__main__":
    main()
