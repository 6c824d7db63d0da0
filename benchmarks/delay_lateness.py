"""Delayed-message lateness and retry gap as a user sees them, beside the broker's own floor.

One namespace per run; one table for all clients, ``500ms 750ms 1s 2s 5s`` (level 1 =
500 ms for delayed sends; level 3 = the first retry = 1 s). Product defaults everywhere
except the group-join timings (session 6 s, heartbeat 200 ms, cooperative-sticky) of the
forwarder and the push consumer, so a join takes ~1 s; fetch settings stay the product's.
The forwarder is the real ``rmqcompat forwarder run`` CLI in its own process (as users
deploy it), or a ``DelayForwarder`` in this process with ``--forwarder in-process``. A
spawned raw confluent-kafka reader (fetch.wait.max.ms=10, assigned from the start of the
topics, no group) stamps the receive time of every record. Per rate, in this order:

1. floor: a raw confluent-kafka ``Producer`` (the SDK's ``PRODUCER_DEFAULTS``) produces
   undelayed records at RATE for ``--floor-seconds``; floor = receive - CreateTime: what
   the broker and the client give on this machine at that rate, without any delay.
2. delayed sends: a ``DefaultMQProducer`` calls ``send_async(Message(.., delay_time_level=1))``
   at RATE for ``--seconds``; the body carries the send-call time (epoch ms), so
   - lateness (receive)   = receive - (send call + 500), the figure the targets judge;
   - lateness (timestamp) = forwarded record's CreateTime - (send call + 500);
   - send -> append       = the level record's LogAppendTime - send call;
   - due -> forwarded     = forwarded CreateTime - (LogAppendTime + 500): the forwarder's
     part (RocketMQ counts a delay from the store time);
   - DUE_TIME -> fwd      = forwarded CreateTime - the level record's DUE_TIME header (the
     parker's clock at the send + 500);
   - forwarded -> received = receive - forwarded CreateTime;
   - early = records whose lateness (timestamp) is below -1 ms (CreateTime is whole ms).
   Targets (p99 of lateness from the send call, receive): 20 msg/s <= 20 ms, 500 <= 30,
   5,000 <= 50 (trace on), 20,000 <= 100 (trace on).
3. retry gap (``--retry-rates``): a ``DefaultMQPushConsumer`` in its own process whose
   listener returns RECONSUME_LATER on a message's first delivery and CONSUME_SUCCESS on
   its retry; the SDK producer sends the messages at RATE for ``--retry-seconds``.
   gap = second delivery (listener entered) - first delivery's failure (listener
   returned), both on the consumer's clock; reported as gap - 1000 ms (level 3).
   Target: p99 <= 50 ms up to 5,000 msg/s.

Each percentile is the median over runs of that run's percentile; PASS/MISS judges the
median p99. The load average is printed before and after.

    python benchmarks/delay_lateness.py [--rates 20,500,5000,20000] [--seconds 10]
        [--floor-seconds 5] [--retry-rates 20,500,5000] [--retry-seconds 5] [--runs 3]
        [--trace on|off] [--forwarder process|in-process] [--bootstrap-servers HOST:PORT]

``--trace`` switches the SDK clients' trace events (producer, forwarder, consumer;
default on, the product default). Without ``--bootstrap-servers`` it starts a dev broker.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing as mp
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator

from bench_broker import add_broker_options, broker, forwarder_process, produce_waiting
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

from rmqcompat import properties as props
from rmqcompat.message import Message
from rmqcompat.producer import DefaultMQProducer
from rmqcompat.producer.settings import PRODUCER_DEFAULTS
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.naming import to_kafka_topic
from rmqcompat.topics.topology import build_topology, provision_topology

TABLE = "500ms 750ms 1s 2s 5s"
LEVELS = DelayLevels.parse(TABLE)
DELAY = LEVELS.delay_ms(1)  # delayed sends: level 1
RETRY_DELAY = LEVELS.delay_ms(3)  # first retry: level 3 + reconsume_times 0
TARGETS = {20: 20, 500: 30, 5000: 50, 20000: 100}  # rate -> p99 lateness target, ms
RETRY_TARGET, RETRY_TARGET_UP_TO = 50, 5000
# Group-join timings only, so a join takes ~1 s; the fetch settings are the product's.
JOIN = {
    "session.timeout.ms": 6000,
    "heartbeat.interval.ms": 200,
    "partition.assignment.strategy": "cooperative-sticky",
}
CTX = mp.get_context("spawn")


def now_ms() -> float:
    return time.time_ns() / 1e6


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def partitions(bs: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bs, "group.id": uuid.uuid4().hex})
    try:
        return len(consumer.list_topics(topic, timeout=10).topics[topic].partitions)
    finally:
        consumer.close()


def pace(rate: int, seconds: float, send: Callable[[int], None], poll: Callable[[], None]):
    """Call ``send(seq)`` ``rate * seconds`` times evenly; returns the achieved msg/s."""
    count = int(rate * seconds)
    start, sent = time.perf_counter(), 0
    while sent < count:
        target = min(count, int((time.perf_counter() - start) * rate) + 1)
        for seq in range(sent, target):
            send(seq)
        sent = target
        poll()
        time.sleep(0.0005 if rate >= 1000 else 0.002)
    return count / max(1e-9, time.perf_counter() - start)


# -- child processes ------------------------------------------------------------------------


def reader(bs: str, topics: list[tuple[str, int]], out: str, seen, stop) -> None:
    """Record (timestamp, receive ms) of every record of ``topics`` until ``stop``."""
    consumer = Consumer(
        {"bootstrap.servers": bs, "group.id": uuid.uuid4().hex, "fetch.wait.max.ms": 10,
         "enable.auto.commit": False}
    )  # fmt: skip
    consumer.assign([TopicPartition(t, p, OFFSET_BEGINNING) for t, n in topics for p in range(n)])
    got: dict[str, tuple[int, float]] = {}
    while not stop.is_set():
        # poll waits for the first record; consume(n, 0) takes what else is there (a
        # consume(n, timeout) would wait out its timeout, quantising the receive times)
        first = consumer.poll(0.05)
        at = now_ms()
        msgs = [] if first is None else [first, *consumer.consume(999, 0)]
        for msg in msgs:
            if msg.error() is None:
                got[msg.value().decode()] = (msg.timestamp()[1], at)
        if msgs:
            with seen.get_lock():
                seen.value = len(got)
    consumer.close()
    with open(out, "w") as f:
        json.dump(got, f)


def retry_consumer(bs: str, ns: str, trace: bool, out: str, seen, stop) -> None:
    """Fail each message once, succeed on its retry; dump {body: [failed, redelivered]}."""
    import threading

    from rmqcompat.consumer.listener import ConsumeConcurrentlyStatus as Status
    from rmqcompat.consumer.listener import ConsumeFromWhere
    from rmqcompat.consumer.push_consumer import DefaultMQPushConsumer

    lock = threading.Lock()
    failed: dict[str, float] = {}
    again: dict[str, float] = {}

    def listener(msgs, _ctx):
        entered = now_ms()
        if all(m.reconsume_times == 0 for m in msgs):
            with lock:
                for m in msgs:
                    failed.setdefault(m.body.decode(), now_ms())
            return Status.RECONSUME_LATER
        with lock:
            for m in msgs:
                again.setdefault(m.body.decode(), entered)
            with seen.get_lock():
                seen.value = len(again)
        return Status.CONSUME_SUCCESS

    consumer = DefaultMQPushConsumer(
        "BenchRetry", bs, namespace=ns, message_delay_level=TABLE, kafka_config=JOIN,
        consume_from_where=ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, trace_enabled=trace,
    )  # fmt: skip
    consumer.subscribe("Retry")
    consumer.register_message_listener(listener)
    with consumer:
        stop.wait()
    with lock, open(out, "w") as f:
        json.dump({k: [v, again.get(k)] for k, v in failed.items()}, f)


@contextlib.contextmanager
def child(target: Callable[..., None], *args: object) -> Iterator[tuple]:
    """``target(*args, out, seen, stop)`` in a spawned process; yields (seen, stop, out);
    on exit stops it and leaves its JSON output in ``out``."""
    seen, stop = CTX.Value("q", 0), CTX.Event()
    fd, out = tempfile.mkstemp(suffix=".json", prefix="delay_lateness_")
    os.close(fd)
    proc = CTX.Process(target=target, args=(*args, out, seen, stop))
    proc.start()
    try:
        yield seen, stop, out
    finally:
        stop.set()
        proc.join(120)
        if proc.exitcode != 0:
            raise SystemExit(f"{target.__name__} failed with exit code {proc.exitcode}")


def collected(out: str) -> dict:
    with open(out) as f:
        data = json.load(f)
    os.remove(out)
    return data


@contextlib.contextmanager
def forwarder(bs: str, ns: str, args: argparse.Namespace) -> Iterator[None]:
    """The delay forwarder, ready (healthy) on entry."""
    trace = args.trace == "on"
    if args.forwarder == "in-process":
        from rmqcompat.forwarder import DelayForwarder

        fwd = DelayForwarder(
            bs, namespace=ns, message_delay_level=TABLE, kafka_config=JOIN, trace_enabled=trace
        )
        fwd.start()
        try:
            deadline = time.monotonic() + 60
            while fwd.unhealthy_reason() is not None:
                if time.monotonic() > deadline:
                    raise SystemExit("the forwarder did not become healthy")
                time.sleep(0.05)
            yield
        finally:
            fwd.shutdown()
        return
    with forwarder_process(bs, ns, TABLE, trace=trace, overrides=JOIN):
        yield


def wait_for(seen, count: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while seen.value < count:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


# -- one run --------------------------------------------------------------------------------


def level_records(bs: str, topic: str, n: int, count: int) -> dict[str, tuple[int, int]]:
    """{body: (LogAppendTime, DUE_TIME)} of the level topic's records."""
    consumer = Consumer({"bootstrap.servers": bs, "group.id": uuid.uuid4().hex})
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(n)])
    out: dict[str, tuple[int, int]] = {}
    deadline, idle = time.monotonic() + 60, time.monotonic()
    while len(out) < count and time.monotonic() < deadline and time.monotonic() - idle < 5:
        msgs = consumer.consume(2000, 0.2)
        if msgs:
            idle = time.monotonic()
        for msg in msgs:
            if msg.error() is None:
                due = props.decode_int(props.from_headers(msg.headers()), props.DUE_TIME, 0)
                out[msg.value().decode()] = (msg.timestamp()[1], due)
    consumer.close()
    return out


def one_run(bs: str, args: argparse.Namespace) -> tuple[dict[int, dict], dict[int, dict]]:
    ns = "lat" + uuid.uuid4().hex[:8]
    trace = args.trace == "on"
    topology = build_topology(topics=["Lat", "Floor", "Retry"], levels=LEVELS, namespace=ns)
    provision_topology({"bootstrap.servers": bs}, topology)
    lat, floor_topic = to_kafka_topic("Lat", ns), to_kafka_topic("Floor", ns)
    level_topic = to_kafka_topic(LEVELS.topic(1), ns)
    topics = [(t, partitions(bs, t)) for t in (lat, floor_topic, level_topic)]
    raw = Producer({**PRODUCER_DEFAULTS, "bootstrap.servers": bs})
    sdk = DefaultMQProducer("BenchPG", bs, namespace=ns, message_delay_level=TABLE,
                            trace_enabled=trace)  # fmt: skip
    sdk.start()
    send_at: dict[str, float] = {}
    lateness: dict[int, dict] = {}
    retry: dict[int, dict] = {}
    with forwarder(bs, ns, args):
        with child(reader, bs, topics[:2]) as (seen, _stop, out):
            sdk.send(Message("Lat", b"warm", delay_time_level=1))
            produce_waiting(raw, floor_topic, b"warm floor")
            raw.flush(30)
            if not wait_for(seen, 2, 60):
                raise SystemExit(f"the warm-up records did not arrive ({seen.value} of 2)")
            expected, futures = 2, []
            for rate in args.rates:
                achieved = {}

                def raw_send(seq: int, rate: int = rate) -> None:
                    produce_waiting(raw, floor_topic, f"F {rate} {seq}".encode())

                achieved["floor"] = pace(rate, args.floor_seconds, raw_send, lambda: raw.poll(0))
                raw.flush(60)
                expected += int(rate * args.floor_seconds)
                wait_for(seen, expected, 30)

                def sdk_send(seq: int, rate: int = rate) -> None:
                    at = now_ms()
                    body = f"D {rate} {seq} {at:.3f}"
                    send_at[body] = at
                    futures.append(sdk.send_async(Message("Lat", body, delay_time_level=1)))

                achieved["sent"] = pace(rate, args.seconds, sdk_send, lambda: None)
                expected += int(rate * args.seconds)
                if not wait_for(seen, expected, 60):
                    print(f"  (rate {rate}: {expected - seen.value} records not received)")
                lateness[rate] = achieved
        received = collected(out)
        if args.retry_rates:
            with child(retry_consumer, bs, ns, trace) as (seen, _stop, out):
                sdk.send(Message("Retry", b"warm"))
                if not wait_for(seen, 1, 90):
                    raise SystemExit("the warm-up retry did not arrive")
                expected = 1
                for rate in args.retry_rates:

                    def retry_send(seq: int, rate: int = rate) -> None:
                        futures.append(sdk.send_async(Message("Retry", f"R {rate} {seq}")))

                    retry[rate] = {"sent": pace(rate, args.retry_seconds, retry_send, lambda: None)}
                    expected += int(rate * args.retry_seconds)
                    if not wait_for(seen, expected, 60):
                        print(f"  (retry rate {rate}: {expected - seen.value} retries missing)")
            gaps = collected(out)
    sdk.shutdown()
    failed = sum(1 for f in futures if f.exception() is not None)
    if failed:
        raise SystemExit(f"{failed} SDK sends failed")
    parked = level_records(bs, level_topic, topics[2][1], len(send_at))
    for rate, row in lateness.items():
        row.update(delayed_stats(rate, args, send_at, received, parked))
    for rate, row in retry.items():
        delays = [b - a - RETRY_DELAY for k, (a, b) in gaps.items()
                  if k.startswith(f"R {rate} ") and b is not None]  # fmt: skip
        row.update(n=len(delays), **stats("gap", delays))
    return lateness, retry


def stats(name: str, values: list[float]) -> dict[str, float]:
    return {f"{name}_p50": pct(values, 0.5), f"{name}_p99": pct(values, 0.99),
            f"{name}_max": max(values) if values else float("nan")}  # fmt: skip


def delayed_stats(rate, args, send_at, received, parked) -> dict[str, float]:
    floor = [
        at - ts
        for seq in range(int(rate * args.floor_seconds))
        if (hit := received.get(f"F {rate} {seq}")) is not None
        for ts, at in [hit]
    ]
    cols: dict[str, list[float]] = {k: [] for k in ("recv", "ts", "park", "fwd", "due", "read")}
    for body, sent in send_at.items():
        if not body.startswith(f"D {rate} ") or body not in received:
            continue
        created, at = received[body]
        cols["recv"].append(at - (sent + DELAY))
        cols["ts"].append(created - (sent + DELAY))
        cols["read"].append(at - created)
        if body in parked:
            appended, due = parked[body]
            cols["park"].append(appended - sent)
            cols["fwd"].append(created - (appended + DELAY))
            if due:
                cols["due"].append(created - due)
    out = {"n": len(cols["recv"]), "early": sum(1 for x in cols["ts"] if x < -1)}
    for name, values in cols.items():
        out.update(stats(name, values))
    out.update(stats("floor", floor))
    return out


# -- report ---------------------------------------------------------------------------------


def median_row(runs: list[dict]) -> dict[str, float]:
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def show_lateness(rate: int, runs: list[dict], trace: str) -> None:
    def fmt(r: dict) -> str:
        return (
            f"sent {r['sent']:,.0f}/s, received {r['n']:.0f} (early {r['early']:.0f}) | "
            f"from send: receive p50 "
            f"{r['recv_p50']:.1f} p99 {r['recv_p99']:.1f} max {r['recv_max']:.1f}, timestamp "
            f"p50 {r['ts_p50']:.1f} p99 {r['ts_p99']:.1f} max {r['ts_max']:.1f} | send->append "
            f"{r['park_p50']:.1f}/{r['park_p99']:.1f} due->fwd {r['fwd_p50']:.1f}/"
            f"{r['fwd_p99']:.1f} DUE_TIME->fwd {r['due_p50']:.1f}/{r['due_p99']:.1f} "
            f"fwd->recv {r['read_p50']:.1f}/{r['read_p99']:.1f} | raw floor (produce "
            f"{r['floor']:,.0f}/s) p50 {r['floor_p50']:.1f} p99 {r['floor_p99']:.1f} max "
            f"{r['floor_max']:.1f}"
        )

    target = TARGETS.get(rate)
    print(f"delayed sends at {rate:,} msg/s, level 1 = {DELAY} ms (ms; breakdown p50/p99):")
    for i, run in enumerate(runs, 1):
        print(f"  run {i}: {fmt(run)}")
    med = median_row(runs)
    print(f"  median: {fmt(med)}")
    if target is not None:
        verdict = "PASS" if med["recv_p99"] <= target else "MISS"
        note = " (target stated with trace on)" if rate >= 5000 and trace == "off" else ""
        print(f"  target p99 from send <= {target} ms: {verdict} ({med['recv_p99']:.1f}){note}")


def show_retry(rate: int, runs: list[dict]) -> None:
    def fmt(r: dict) -> str:
        return (
            f"sent {r['sent']:,.0f}/s, retried {r['n']:.0f} | gap - {RETRY_DELAY} ms: p50 "
            f"{r['gap_p50']:.1f} p99 {r['gap_p99']:.1f} max {r['gap_max']:.1f}"
        )

    print(f"retry gap at {rate:,} msg/s, level 3 = {RETRY_DELAY} ms (failure -> redelivery):")
    for i, run in enumerate(runs, 1):
        print(f"  run {i}: {fmt(run)}")
    med = median_row(runs)
    print(f"  median: {fmt(med)}")
    if rate <= RETRY_TARGET_UP_TO:
        verdict = "PASS" if med["gap_p99"] <= RETRY_TARGET else "MISS"
        print(f"  target p99 gap - delay <= {RETRY_TARGET} ms: {verdict} ({med['gap_p99']:.1f})")


def rates(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", type=rates, default=[20, 500, 5000, 20000])
    parser.add_argument("--seconds", type=float, default=10.0, help="delayed sends per rate")
    parser.add_argument("--floor-seconds", type=float, default=5.0, help="raw floor per rate")
    parser.add_argument("--retry-rates", type=rates, default=[20, 500, 5000])
    parser.add_argument("--retry-seconds", type=float, default=5.0, help="retry sends per rate")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--trace", choices=["on", "off"], default="on", help="SDK trace events (default on)"
    )
    parser.add_argument("--forwarder", choices=["process", "in-process"], default="process")
    add_broker_options(parser)
    args = parser.parse_args()
    with broker(args) as bs:
        print(f"trace {args.trace}, forwarder {args.forwarder}, table {TABLE}, {args.runs} runs, "
              f"{os.cpu_count()} CPUs, load average {load()}", flush=True)  # fmt: skip
        runs = []
        for i in range(args.runs):
            runs.append(one_run(bs, args))
            print(f"run {i + 1} done, load average {load()}", flush=True)
    for rate in args.rates:
        show_lateness(rate, [late[rate] for late, _ in runs], args.trace)
    for rate in args.retry_rates:
        show_retry(rate, [retry[rate] for _, retry in runs])
    print(f"load average at the end {load()}")


if __name__ == "__main__":
    main()
