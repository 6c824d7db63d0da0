"""RocketMQ 5 SimpleConsumer throughput: receive + ack per message vs the raw client.

Both sides read the same pre-filled topic (4 partitions, ``--messages`` records of
``--size`` bytes with rmqcompat's headers, keyed so the partitions fill evenly), each
with a fresh group from the first offset (a RocketMQ 5 group has no "from where"
setting: the partitions must stay "young", under 10,000 records and 5 minutes old, so a
new group starts at 0; keep ``--messages`` under 40,000), alternating, ``--runs``
times. Each figure is messages / time from the first message handled to the last; the
script prints every run, the medians and the SimpleConsumer/raw ratio of the medians.

- raw: the raw loop of ``consume.py`` (``consume(500)``, ``store_offsets``, auto-commit).
- simple: ``SimpleConsumer.receive(--max, 30)`` in a loop, then ``ack(msg)`` for each
  message: a receipt handle and lease per message, the hand-over from the core's
  listener threads (``max_cached_messages`` = ``--cached``), settlement and commits.

    python benchmarks/simple_consume.py [--messages 20000] [--runs 3] [--max 32]
        [--cached 64] [--bootstrap-servers h:p]
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid

from bench_broker import add_broker_options, broker
from consume import NS, OVERRIDES, fill, handle, raw

from rmqcompat.v5 import ClientConfiguration, FilterExpression, SimpleConsumer


def simple(bootstrap: str, topic: str, count: int, max_num: int, cached: int) -> float:
    config = ClientConfiguration(bootstrap, None, NS, kafka_config=OVERRIDES)
    group = f"simple-{uuid.uuid4().hex[:12]}"
    consumer = SimpleConsumer(
        config, group, {topic: FilterExpression()}, await_duration=1, max_cached_messages=cached
    )
    consumer.startup()
    seen, start = 0, 0.0
    while seen < count:
        msgs = consumer.receive(max_num, 30)
        if msgs and not start:
            start = time.perf_counter()
        for msg in msgs:
            handle(msg.body, msg.properties)
            consumer.ack(msg)
        seen += len(msgs)
    elapsed = time.perf_counter() - start
    consumer.shutdown()
    return count / elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--max", type=int, default=32, help="max_message_num per receive")
    parser.add_argument("--cached", type=int, default=64, help="max_cached_messages")
    add_broker_options(parser)
    args = parser.parse_args()
    with broker(args) as bootstrap:
        topic = f"bench-{uuid.uuid4().hex[:8]}"
        fill(bootstrap, topic, args.messages, args.size, keyed=True)
        raws: list[float] = []
        simples: list[float] = []
        for run in range(args.runs):
            raws.append(raw(bootstrap, topic, args.messages))
            simples.append(simple(bootstrap, topic, args.messages, args.max, args.cached))
            print(f"run {run + 1}: raw {raws[-1]:,.0f} msg/s  simple {simples[-1]:,.0f} msg/s")
        r, s = statistics.median(raws), statistics.median(simples)
        print(f"median: raw {r:,.0f} msg/s  simple {s:,.0f} msg/s  ratio {s / r:.3f}")


if __name__ == "__main__":
    main()
