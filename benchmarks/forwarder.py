"""Delay-forwarder benchmark: lateness at a steady rate, backlog throughput, retry round trip.

Every party runs in its own process, so none of them competes with another for a GIL:
the broker (Tansu dev broker unless --bootstrap-servers), the forwarder (the real
``rmqcompat forwarder run`` CLI), the load generator and copy loops (spawned children);
this process only reads and times. Each run uses a fresh namespace. Measured per run:

1. lateness: park SIZE-byte records on a one-level table (--level, 1s) at RATE msg/s for
   SECONDS s. The body carries the record's DUE_TIME (the generator's clock at park +
   delay). The forwarder acts on DUE_TIME, trusted within the bounds the parked record's
   LogAppendTime sets (``rmqcompat.parking.due_time``), so:
   - forwarder lateness = CreateTime of the forwarded record (set by the forwarder's
     produce call) - the due time the forwarder acted on: what the forwarder adds;
   - parking = LogAppendTime - park time: the generator's and the broker's share;
   - end to end = CreateTime of the forwarded record - DUE_TIME (both of the above);
   - arrival = time this process read the forwarded record - DUE_TIME.
2. backlog: BACKLOG records already due, parked before the forwarder starts; msgs/s =
   count / span of their CreateTimes on the real topic. A raw confluent-kafka
   consume->produce loop copies the same records (headers kept), timed the same way.
   Also the CPU a record of each (all threads; the forwarder's from ``/proc``, and of it
   the share of librdkafka's own threads, the rest being Python's), steadier than the
   rates on a shared machine.
3. retry round trip: RETRY messages on a business topic; a DefaultMQPushConsumer whose
   listener returns RECONSUME_LATER on the first delivery and CONSUME_SUCCESS on the
   retry, table ``10ms 20ms 30ms`` (first retry waits 30 ms). msgs/s = messages / time
   from the first delivery to the last successful retry (consume -> send-back -> level
   topic -> forwarder -> retry topic -> consume). Compared with the raw copy of the same
   messages; note the loop does two consumes and two produces per message. Also the
   consumer process's CPU time over that span per message (all its threads), and the
   part of it its cyclic garbage collector ran (timed by ``gc.callbacks``).

    python benchmarks/forwarder.py [--rate 5000] [--seconds 10] [--runs 3] [--size 100]
        [--backlog 50000] [--retry 10000] [--bootstrap-servers host:port]
        [--max-held N] [--max-held-bytes B]   (forwarder caps; default: the product's)
        [--trace on|off]   (the forwarder's and retry consumer's trace events; default on)
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing as mp
import os
import statistics
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator

from bench_broker import add_broker_options, broker, forwarder_process, produce_waiting
from collector_clock import CollectorClock
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

from rmqcompat import parking
from rmqcompat import properties as props
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.naming import to_kafka_topic
from rmqcompat.topics.spec import TopologySpec
from rmqcompat.topics.topology import build_topology, provision_topology, with_partitions

PARTITIONS = 4
RETRY_TABLE = "10ms 20ms 30ms"
# Test-style overrides so a group join takes ~1 s on the dev broker (see TESTING.md).
OVERRIDES = {
    "session.timeout.ms": 6000,
    "heartbeat.interval.ms": 200,
    "fetch.wait.max.ms": 50,
    "partition.assignment.strategy": "cooperative-sticky",
}
# The forwarder gets only what a group join on the dev broker needs, so its fetch settings
# are the product defaults being measured (fetch.wait.max.ms above is the readers' own).
FORWARDER_OVERRIDES = {k: v for k, v in OVERRIDES.items() if k != "fetch.wait.max.ms"}
CTX = mp.get_context("spawn")


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def pct(values: list[int], q: float) -> int:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def setup(bs: str, ns: str, table: str) -> None:
    # The level topics as every client creates them (LogAppendTime: the forwarder's clock).
    spec = with_partitions(TopologySpec(), {"business": PARTITIONS, "delay": PARTITIONS})
    topology = build_topology(
        topics=["Bench", "Copy"], levels=DelayLevels.parse(table), spec=spec, namespace=ns
    )
    provision_topology({"bootstrap.servers": bs}, topology)


def body(i: int, due: int, size: int) -> bytes:
    return f"{i} {due} ".encode().ljust(size, b"x")


# -- child processes ------------------------------------------------------------------------


def generate(bs: str, ns: str, table: str, rate: int, seconds: float, size: int, overdue: bool):
    """Park records at ``rate`` msg/s for ``seconds`` (rate 0: as fast as possible, due now)."""
    levels = DelayLevels.parse(table)
    delay = levels.delay_ms(1)
    producer = Producer({"bootstrap.servers": bs, "linger.ms": 5})
    count = int(rate * seconds)
    start, sent = time.monotonic(), 0
    while sent < count:
        target = count if overdue else min(count, int((time.monotonic() - start) * rate))
        for i in range(sent, target):
            parked_at = now_ms() - (delay + 1 if overdue else 0)
            rec = parking.park(
                body(i, parked_at + delay, size), str(i).encode(), {props.UNIQ_KEY: f"id{i}"},
                real_topic="Bench", level=1, levels=levels, namespace=ns, now_ms=parked_at,
            )  # fmt: skip
            produce_waiting(producer, rec.topic, rec.value, rec.key, rec.headers)
        sent = target
        producer.poll(0)
        time.sleep(0.001)  # pacing of the generator only
    producer.flush(120)


def raw_copy(bs: str, source: str, target: str, count: int, out=None) -> None:
    """A plain consume->produce loop (headers kept, idempotent producer, no commits); puts
    on ``out`` (if given) this process's CPU seconds from the first record read to the
    last one delivered."""
    consumer = Consumer({**OVERRIDES, "bootstrap.servers": bs, "group.id": uuid.uuid4().hex})
    consumer.assign([TopicPartition(source, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
    producer = Producer({"bootstrap.servers": bs, "enable.idempotence": True})
    copied, deadline, cpu0 = 0, time.monotonic() + 300, None
    while copied < count and time.monotonic() < deadline:
        for msg in consumer.consume(500, 1.0):
            if msg.error():
                continue
            if cpu0 is None:
                cpu0 = time.process_time()
            produce_waiting(producer, target, msg.value(), msg.key(), msg.headers())
            copied += 1
        producer.poll(0)
    producer.flush(60)
    if out is not None:
        out.put(time.process_time() - (cpu0 or 0.0))
    consumer.close()


def process_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) process ``pid`` has used so far, all its threads."""
    with open(f"/proc/{pid}/stat") as stat:
        return _cpu_s(stat.read())


def librdkafka_cpu_s(pid: int) -> float:
    """CPU seconds the threads of process ``pid`` that librdkafka started (named ``rdk:*``)
    have used so far: the rest of the process's is its Python threads'."""
    total = 0.0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as stat:
                line = stat.read()
        except OSError:  # the thread ended meanwhile
            continue
        if line[line.index("(") + 1 :].startswith("rdk:"):
            total += _cpu_s(line)
    return total


def _cpu_s(stat_line: str) -> float:
    """User + system CPU seconds of a ``/proc/.../stat`` line."""
    fields = stat_line.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def retry_consumer(bs: str, ns: str, topic: str, count: int, trace: bool, out) -> None:
    """Fail each message once, succeed on its retry; report (successes, first delivery to
    last success, this process's CPU seconds and the collector's in that span)."""
    import threading

    from rmqcompat.consumer.listener import ConsumeConcurrentlyStatus as Status
    from rmqcompat.consumer.listener import ConsumeFromWhere
    from rmqcompat.consumer.push_consumer import DefaultMQPushConsumer

    lock, done = threading.Lock(), threading.Event()
    state = {"first": 0, "last": 0, "ok": 0, "cpu0": 0.0, "cpu": 0.0, "gc": 0.0}
    collector = CollectorClock()

    def listener(msgs, _ctx):
        with lock:
            if not state["first"]:
                state["first"], state["cpu0"] = time.monotonic(), time.process_time()
                collector.start()
            if msgs[0].reconsume_times == 0:
                return Status.RECONSUME_LATER
            state["ok"] += 1
            state["last"] = time.monotonic()
            if state["ok"] == count:
                state["cpu"] = time.process_time() - state["cpu0"]
                state["gc"] = collector.seconds
                done.set()
            return Status.CONSUME_SUCCESS

    consumer = DefaultMQPushConsumer(
        "bench", bs, namespace=ns, message_delay_level=RETRY_TABLE, kafka_config=OVERRIDES,
        consume_from_where=ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, trace_enabled=trace,
    )  # fmt: skip
    consumer.subscribe(topic)
    consumer.register_message_listener(listener)
    with consumer:
        done.wait(600)
    out.put((state["ok"], state["last"] - state["first"], state["cpu"], state["gc"]))


def run_child(target: Callable[..., None], *args: object) -> None:
    proc = CTX.Process(target=target, args=args)
    proc.start()
    proc.join()
    if proc.exitcode != 0:
        raise SystemExit(f"{target.__name__} failed with exit code {proc.exitcode}")


@contextlib.contextmanager
def forwarder(
    bs: str, ns: str, table: str, args: argparse.Namespace
) -> Iterator[subprocess.Popen[bytes]]:
    """``rmqcompat forwarder run`` in its own process, ready (healthy) on entry."""
    caps = {"--max-held-per-partition": args.max_held,
            "--max-held-bytes-per-partition": args.max_held_bytes}  # fmt: skip
    options = [arg for k, v in caps.items() if v is not None for arg in (k, str(v))]
    with forwarder_process(
        bs, ns, table, trace=args.trace == "on", overrides=FORWARDER_OVERRIDES, options=options
    ) as proc:
        yield proc


# -- measurements ---------------------------------------------------------------------------


def read(
    bs: str, topic: str, count: int, writer: subprocess.Popen[bytes] | None = None
) -> list[tuple[bytes, int, int]]:
    """(value, timestamp, read time) of ``count`` records of ``topic``, from its start;
    ends the benchmark at once if ``writer``, the process writing them, exits before."""
    consumer = Consumer({**OVERRIDES, "bootstrap.servers": bs, "group.id": uuid.uuid4().hex})
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
    out: list[tuple[bytes, int, int]] = []
    deadline = time.monotonic() + 300
    while len(out) < count and time.monotonic() < deadline:
        if writer is not None and writer.poll() is not None:
            consumer.close()
            raise SystemExit(
                f"the forwarder exited with code {writer.returncode} after {len(out)} of "
                f"{count} records of {topic}"
            )
        for msg in consumer.consume(1000, 0.1):
            if not msg.error():
                out.append((msg.value(), msg.timestamp()[1], now_ms()))
    consumer.close()
    return out


def span_rate(records: list[tuple[bytes, int, int]]) -> float:
    created = [c for _, c, _ in records]
    return len(created) / max(1, max(created) - min(created)) * 1000


def lateness_run(bs: str, args: argparse.Namespace) -> dict[str, float]:
    ns = "bench" + uuid.uuid4().hex[:8]
    setup(bs, ns, args.level)
    count = int(args.rate * args.seconds)
    with forwarder(bs, ns, args.level, args) as proc:
        gen = CTX.Process(
            target=generate, args=(bs, ns, args.level, args.rate, args.seconds, args.size, False)
        )
        gen.start()
        got = read(bs, f"{ns}.Bench", count, proc)
        gen.join()
    delay = DelayLevels.parse(args.level).delay_ms(1)
    level_topic = to_kafka_topic(DelayLevels.parse(args.level).topic(1), ns)
    appended = {value.split(b" ", 1)[0]: at for value, at, _ in read(bs, level_topic, count)}
    late, parked, end, arrival = [], [], [], []
    for value, created, read_at in got:
        number, due = value.split(b" ", 2)[:2]
        append_ms = appended[number]
        acted_on = parking.due_time(
            {props.DUE_TIME: due.decode()}, append_ms=append_ms, level_delay_ms=delay
        )
        late.append(created - acted_on)
        parked.append(append_ms - (int(due) - delay))
        end.append(created - int(due))
        arrival.append(read_at - int(due))
    return {
        "n": len(got), "early": sum(1 for x in late if x < 0),
        "p50": pct(late, 0.5), "p99": pct(late, 0.99), "max": max(late),
        "park_p50": pct(parked, 0.5), "park_p99": pct(parked, 0.99),
        "end_p50": pct(end, 0.5), "end_p99": pct(end, 0.99), "end_max": max(end),
        "arr_p50": pct(arrival, 0.5), "arr_p99": pct(arrival, 0.99), "arr_max": max(arrival),
    }  # fmt: skip


def backlog_run(bs: str, args: argparse.Namespace) -> dict[str, float]:
    """Drain rates, and CPU a record: the forwarder's from when it reported healthy (it has
    its assignment then; what it forwarded in the health check's last 50 ms is not
    counted) to the last record read back, the raw copy's from its first record read."""
    ns = "bench" + uuid.uuid4().hex[:8]
    setup(bs, ns, args.level)
    run_child(generate, bs, ns, args.level, args.backlog, 1.0, args.size, True)
    with forwarder(bs, ns, args.level, args) as proc:
        cpu0, rdk0 = process_cpu_s(proc.pid), librdkafka_cpu_s(proc.pid)
        fwd = span_rate(read(bs, f"{ns}.Bench", args.backlog, proc))
        fwd_cpu = process_cpu_s(proc.pid) - cpu0
        rdk_cpu = librdkafka_cpu_s(proc.pid) - rdk0
    level_topic = to_kafka_topic(DelayLevels.parse(args.level).topic(1), ns)
    out = CTX.Queue()
    run_child(raw_copy, bs, level_topic, f"{ns}.Copy", args.backlog, out)
    raw_cpu = out.get(timeout=60)
    raw = span_rate(read(bs, f"{ns}.Copy", args.backlog))
    per_record = 1e6 / args.backlog  # seconds -> us a record
    return {"fwd": fwd, "raw": raw, "ratio": fwd / raw, "fwd_us": fwd_cpu * per_record,
            "fwd_rdk_us": rdk_cpu * per_record, "raw_us": raw_cpu * per_record}  # fmt: skip


def fill_business(bs: str, topic: str, count: int, size: int) -> None:
    producer = Producer({"bootstrap.servers": bs, "linger.ms": 20})
    for i in range(count):
        headers = props.to_headers({props.UNIQ_KEY: f"id{i}", props.TAGS: "A"})
        produce_waiting(producer, topic, body(i, 0, size), None, headers)
    producer.flush(120)


def retry_run(bs: str, args: argparse.Namespace) -> dict[str, float]:
    ns = "bench" + uuid.uuid4().hex[:8]
    setup(bs, ns, RETRY_TABLE)
    run_child(fill_business, bs, f"{ns}.Bench", args.retry, args.size)
    out = CTX.Queue()
    with forwarder(bs, ns, RETRY_TABLE, args):
        trace = args.trace == "on"
        consumer = CTX.Process(
            target=retry_consumer, args=(bs, ns, "Bench", args.retry, trace, out)
        )
        consumer.start()
        ok, elapsed, cpu, collected = out.get(timeout=900)
        consumer.join()
    run_child(raw_copy, bs, f"{ns}.Bench", f"{ns}.Copy", args.retry)
    raw = span_rate(read(bs, f"{ns}.Copy", args.retry))
    loop = ok / elapsed if ok == args.retry else float("nan")
    per_msg = 1e6 / args.retry  # seconds -> us per message
    return {"loop": loop, "raw": raw, "ratio": loop / raw, "cpu_us": cpu * per_msg,
            "gc_us": collected * per_msg}  # fmt: skip


# -- report ---------------------------------------------------------------------------------


def show(title: str, runs: list[dict[str, float]], fmt: Callable[[dict[str, float]], str]) -> None:
    print(title)
    for i, run in enumerate(runs, 1):
        print(f"  run {i}:  {fmt(run)}")
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print(f"  median: {fmt(med)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=5000, help="lateness: msg/s parked")
    parser.add_argument("--seconds", type=float, default=10.0, help="lateness: duration")
    parser.add_argument("--level", default="1s", help="lateness/backlog: the one-level table")
    parser.add_argument("--size", type=int, default=100, help="record value bytes")
    parser.add_argument("--backlog", type=int, default=50_000, help="due records (0 skips)")
    parser.add_argument("--retry", type=int, default=10_000, help="round-trip msgs (0 skips)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--max-held", type=int, help="forwarder --max-held-per-partition")
    parser.add_argument(
        "--max-held-bytes", type=int, help="forwarder --max-held-bytes-per-partition"
    )
    parser.add_argument(
        "--trace", choices=["on", "off"], default="on", help="SDK trace events (default on)"
    )
    add_broker_options(parser)
    args = parser.parse_args()
    with broker(args) as bs:
        print(f"broker {bs}, trace {args.trace}, {PARTITIONS} partitions per topic, "
              f"{args.size}-byte values, "
              f"{args.runs} runs, {os.cpu_count()} CPUs, load average "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}, forwarder caps "
              f"{args.max_held or 'default'} records / {args.max_held_bytes or 'default'} "
              "bytes", flush=True)  # fmt: skip
        late = [lateness_run(bs, args) for _ in range(args.runs if args.rate else 0)]
        back = [backlog_run(bs, args) for _ in range(args.runs if args.backlog else 0)]
        retry = [retry_run(bs, args) for _ in range(args.runs if args.retry else 0)]
    if late:
        show(f"lateness at {args.rate} msg/s for {args.seconds:g} s, level {args.level} "
             "(ms; target forwarder p99 <= 50):", late,
             lambda r: f"records {r['n']:.0f} early {r['early']:.0f} | forwarder p50 "
             f"{r['p50']:.0f} p99 {r['p99']:.0f} max {r['max']:.0f} | parking p50 "
             f"{r['park_p50']:.0f} p99 {r['park_p99']:.0f} | end to end p50 {r['end_p50']:.0f} "
             f"p99 {r['end_p99']:.0f} max {r['end_max']:.0f} | arrival p50 "
             f"{r['arr_p50']:.0f} p99 {r['arr_p99']:.0f} max {r['arr_max']:.0f}")  # fmt: skip
    if back:
        show(f"backlog of {args.backlog} due records (msgs/s):", back,
             lambda r: f"forwarder {r['fwd']:,.0f}  raw copy {r['raw']:,.0f}  "
             f"ratio {r['ratio']:.2f} | CPU a record: forwarder {r['fwd_us']:.1f} us "
             f"(librdkafka's threads {r['fwd_rdk_us']:.1f}), "
             f"raw copy {r['raw_us']:.1f} us")  # fmt: skip
    if retry:
        show(f"retry round trip of {args.retry} messages, table {RETRY_TABLE} (msgs/s):", retry,
             lambda r: f"fail-once loop {r['loop']:,.0f}  raw copy {r['raw']:,.0f}  "
             f"ratio {r['ratio']:.2f} | consumer CPU {r['cpu_us']:.1f} us a message, "
             f"its garbage collector {r['gc_us']:.1f}")  # fmt: skip
    print(f"load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
