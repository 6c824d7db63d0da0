"""Delay-forwarder benchmark: lateness at a steady rate, and backlog throughput vs raw copy.

Per run, on a fresh namespace:
1. lateness: park records on a 1 s level at RATE msg/s for SECONDS s while a forwarder
   runs; lateness = (CreateTime of the forwarded record, i.e. the forwarder's produce
   time) - DUE_TIME, and end-to-end = (time this script reads it) - DUE_TIME.
2. throughput: BACKLOG records already due are parked before the forwarder starts;
   forwarded msgs/s = BACKLOG / (last - first CreateTime on the real topic). The same
   backlog is copied by a raw confluent-kafka consume->produce loop; ratio = fwd / raw.
Medians over RUNS runs are printed. Broker: RMQCOMPAT_BOOTSTRAP_SERVERS, else the dev broker.

    python benchmarks/forwarder.py [--rate 5000] [--seconds 10] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time
import uuid

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

from rmqcompat import parking
from rmqcompat.forwarder import DelayForwarder
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.provision import ensure_topics
from rmqcompat.topics.spec import TopicSpec

TABLE = "1s"
LEVELS = DelayLevels.parse(TABLE)
PARTITIONS = 4
BACKLOG = 50_000
# Test-style overrides so a group join takes ~1 s on the dev broker (see TESTING.md).
OVERRIDES = {
    "session.timeout.ms": 2000 if "RMQCOMPAT_BOOTSTRAP_SERVERS" not in os.environ else 6000,
    "heartbeat.interval.ms": 200,
    "fetch.wait.max.ms": 50,
    "partition.assignment.strategy": "cooperative-sticky",
}


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def setup(bs: str, ns: str) -> None:
    specs = {"Bench": TopicSpec(PARTITIONS), "Copy": TopicSpec(PARTITIONS)}
    specs |= {t: TopicSpec(PARTITIONS) for t in LEVELS.topics()}
    ensure_topics({"bootstrap.servers": bs}, specs, ns)


def park(producer: Producer, ns: str, i: int, parked_at: int) -> None:
    rec = parking.park(
        str(i).encode(), str(i).encode(), {}, real_topic="Bench", level=1, levels=LEVELS,
        namespace=ns, now_ms=parked_at,
    )  # fmt: skip
    producer.produce(rec.topic, rec.value, rec.key, headers=rec.headers)
    producer.poll(0)


def fill_at_rate(bs: str, ns: str, rate: int, seconds: float, dues: dict[bytes, int]) -> None:
    producer = Producer({"bootstrap.servers": bs, "linger.ms": 5})
    start, sent, i = time.monotonic(), 0, 0
    while (elapsed := time.monotonic() - start) < seconds:
        for _ in range(int(elapsed * rate) - sent):
            parked_at = now_ms()
            dues[str(i).encode()] = parked_at + LEVELS.delay_ms(1)
            park(producer, ns, i, parked_at)
            i += 1
        sent = i
        time.sleep(0.002)  # pacing of the load generator, not of the forwarder
    producer.flush(60)


def read_all(bs: str, topic: str, count) -> list[tuple[bytes, int, int]]:
    """(value, CreateTime, receive time) of ``count()`` records of ``topic``."""
    consumer = Consumer({**OVERRIDES, "bootstrap.servers": bs, "group.id": uuid.uuid4().hex})
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
    out: list[tuple[bytes, int, int]] = []
    deadline = time.monotonic() + 300
    while len(out) < count() and time.monotonic() < deadline:
        for msg in consumer.consume(1000, 0.1):
            if not msg.error():
                out.append((msg.value(), msg.timestamp()[1], now_ms()))
    consumer.close()
    return out


def lateness_run(bs: str, rate: int, seconds: float) -> dict[str, float]:
    ns = "bench" + uuid.uuid4().hex[:8]
    setup(bs, ns)
    with DelayForwarder(bs, ns, TABLE, OVERRIDES) as forwarder:
        while not forwarder.healthy():
            time.sleep(0.05)
        dues: dict[bytes, int] = {}
        filler = threading.Thread(target=fill_at_rate, args=(bs, ns, rate, seconds, dues))
        filler.start()
        got = read_all(bs, f"{ns}.Bench", lambda: len(dues) if not filler.is_alive() else 1 << 60)
        filler.join()
    late = [created - dues[value] for value, created, _ in got]
    e2e = [received - dues[value] for value, _, received in got]
    return {
        "n": len(got), "early": sum(1 for x in late if x < 0),
        "p50": pct(late, 0.5), "p99": pct(late, 0.99), "max": max(late),
        "e2e_p50": pct(e2e, 0.5), "e2e_p99": pct(e2e, 0.99),
    }  # fmt: skip


def backlog_run(bs: str) -> dict[str, float]:
    ns = "bench" + uuid.uuid4().hex[:8]
    setup(bs, ns)
    producer = Producer({"bootstrap.servers": bs, "linger.ms": 20})
    overdue = now_ms() - LEVELS.delay_ms(1) - 1
    for i in range(BACKLOG):
        park(producer, ns, i, overdue)
    producer.flush(120)
    with DelayForwarder(bs, ns, TABLE, OVERRIDES):
        got = read_all(bs, f"{ns}.Bench", lambda: BACKLOG)
    created = [c for _, c, _ in got]
    fwd_rate = BACKLOG / max(1, max(created) - min(created)) * 1000
    return {"fwd": fwd_rate, "raw": raw_copy(bs, f"{ns}.Bench", f"{ns}.Copy")}


def raw_copy(bs: str, source: str, target: str) -> float:
    """msgs/s of a plain consume->produce loop over the same records (headers copied)."""
    consumer = Consumer({**OVERRIDES, "bootstrap.servers": bs, "group.id": uuid.uuid4().hex})
    consumer.assign([TopicPartition(source, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
    producer = Producer({"bootstrap.servers": bs, "enable.idempotence": True})
    copied, start = 0, None
    while copied < BACKLOG:
        for msg in consumer.consume(500, 1.0):
            if msg.error():
                continue
            start = start or time.monotonic()
            producer.produce(target, msg.value(), msg.key(), headers=msg.headers())
            producer.poll(0)
            copied += 1
    producer.flush(60)
    elapsed = time.monotonic() - (start or time.monotonic())
    consumer.close()
    return copied / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=5000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    broker = None
    bs = os.environ.get("RMQCOMPAT_BOOTSTRAP_SERVERS")
    if not bs:
        from rmqcompat.dev_broker import DevBroker

        broker = DevBroker()
        bs = broker.start()
    try:
        late = [lateness_run(bs, args.rate, args.seconds) for _ in range(args.runs)]
        back = [backlog_run(bs) for _ in range(args.runs)]
    finally:
        if broker:
            broker.stop()
    med = {k: statistics.median(r[k] for r in late) for k in late[0]}
    print(f"lateness at {args.rate} msg/s for {args.seconds:g} s, level {TABLE}, "
          f"{PARTITIONS} partitions, {args.runs} runs (medians):")  # fmt: skip
    print(f"  records {med['n']:.0f}, delivered before due {med['early']:.0f}")
    print(f"  forwarder (CreateTime - DUE_TIME) ms: p50 {med['p50']:.0f}  p99 {med['p99']:.0f}  "
          f"max {med['max']:.0f}   target p99 <= 50")  # fmt: skip
    print(f"  end-to-end (read by a consumer - DUE_TIME) ms: p50 {med['e2e_p50']:.0f}  "
          f"p99 {med['e2e_p99']:.0f}")  # fmt: skip
    fwd = statistics.median(r["fwd"] for r in back)
    raw = statistics.median(r["raw"] for r in back)
    print(f"backlog of {BACKLOG} due records: forwarder {fwd:,.0f} msg/s, raw consume->produce "
          f"copy {raw:,.0f} msg/s, ratio {fwd / raw:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
