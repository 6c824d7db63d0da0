"""Scale-out: two instances share a group's partitions; one is SIGKILLed mid-stream.

On a three-node Apache Kafka dev cluster (or ``--bootstrap-servers``), with replicated
topics (the default on three brokers), a steady stream at ``--rate`` msgs/s for
``--seconds``; after ``--kill-after`` seconds the first of two instances is SIGKILLed and
the other one must take its partitions over.

- ``forwarders``: delayed sends (``DefaultMQProducer.send_async``, level 1 = 1 s) through
  two ``rmqcompat forwarder run`` processes; a raw reader stamps the receive time of each
  forwarded record. Lateness = receive - (send call + 1 s), as ``delay_lateness.py``
  measures it.
- ``consumers``: plain sends to a four-partition topic consumed by two push-consumer
  processes (one group, no-op listener); delay = listener entry - send call. Each child
  appends what it saw to its own file as it goes, so the killed one's deliveries count too.

Printed per run: the steady p50 / p99 lateness (or delay) of the messages sent more than
2 s before the kill; p99 and max of those sent from then on (the killed instance's share
waits for its session to expire); and **recovery**: the time from the kill until the
send of the last message later than the bound (``--recovered-ms`` or twice the steady
p99, whichever is larger: on a loaded machine the steady lateness alone can pass a fixed
bound).
The group timings are ``delay_lateness.py``'s (session 6 s, heartbeat 200 ms,
cooperative-sticky): a dead member's partitions move after its session expires.

    python benchmarks/scale_out.py [--role forwarders|consumers|both] [--rate 1000]
        [--seconds 30] [--kill-after 10] [--recovered-ms 200] [--runs 3]
        [--trace on|off] [--bootstrap-servers HOST:PORT]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

from bench_broker import forwarder_process
from confluent_kafka import ConsumerGroupState, KafkaException
from confluent_kafka.admin import AdminClient
from delay_lateness import CTX, JOIN, child, collected, load, now_ms, pace, partitions, pct, reader

from rmqcompat.devbroker import DevCluster
from rmqcompat.forwarder.settings import forwarder_group
from rmqcompat.message import Message
from rmqcompat.producer import DefaultMQProducer
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.naming import kafka_group_id, to_kafka_topic
from rmqcompat.topics.topology import build_topology, provision_topology

TABLE = "1s"  # one level: its partitions are the ones the two forwarders share
DELAY_MS = DelayLevels.parse(TABLE).delay_ms(1)
GROUP = "ScaleOut"


def consumer_child(bs: str, ns: str, out: str, trace: bool) -> None:
    """A push consumer of ``Out`` (no-op listener) appending ``<body> <listener entry ms>``
    per message to ``out`` as it goes, until killed."""
    from rmqcompat.consumer.listener import ConsumeConcurrentlyStatus, ConsumeFromWhere
    from rmqcompat.consumer.push_consumer import DefaultMQPushConsumer

    log = open(out, "a", encoding="utf-8")  # open until the process dies

    def listener(msgs, _ctx):
        at = now_ms()
        log.write("".join(f"{m.body.decode()} {at:.3f}\n" for m in msgs))
        log.flush()
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    consumer = DefaultMQPushConsumer(
        GROUP, bs, namespace=ns, kafka_config=JOIN, trace_enabled=trace,
        consume_from_where=ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET,
    )  # fmt: skip
    consumer.subscribe("Out")
    consumer.register_message_listener(listener)
    consumer.start()
    while True:
        time.sleep(1)


@contextlib.contextmanager
def consumer_processes(bs: str, ns: str, trace: bool, logs: list[Path]) -> Iterator[list]:
    """One push-consumer process per log file, killed on exit."""
    procs = [CTX.Process(target=consumer_child, args=(bs, ns, str(log), trace)) for log in logs]
    for proc in procs:
        proc.start()
    try:
        yield procs
    finally:
        for proc in procs:
            proc.kill()
            proc.join()


def seen_by(logs: list[Path]) -> dict[str, float]:
    """The first delivery of each body over every consumer's log."""
    first: dict[str, float] = {}
    for log in logs:
        if not log.exists():
            continue
        for line in log.read_text(encoding="utf-8").splitlines():
            body, at = line.rsplit(" ", 1)
            first[body] = min(first.get(body, float("inf")), float(at))
    return first


#: Messages sent this long before the kill may be in flight on the killed instance: the
#: steady figures are those of the messages sent earlier.
STEADY_MARGIN_MS = 2000.0


def figures(sent: dict[str, float], delivered: dict[str, float], due_after_ms: float,
            killed_at: float, recovered_ms: float) -> dict[str, float]:  # fmt: skip
    """Steady lateness, the worst after the kill, recovery time, and what never arrived.

    Recovery: from the kill to the send of the last message later than the bound, which is
    ``recovered_ms`` or twice the steady p99, whichever is larger (on a loaded machine the
    steady lateness itself can pass a fixed bound).
    """
    rows = sorted((at, body) for body, at in sent.items())
    late = {body: delivered[body] - (at + due_after_ms) for at, body in rows if body in delivered}
    cut = killed_at - STEADY_MARGIN_MS
    steady = [late[b] for at, b in rows if at < cut and b in late]
    around = [late[b] for at, b in rows if at >= cut and b in late]
    bound = max(recovered_ms, 2 * pct(steady, 0.99))
    last_late = max(
        (at for at, b in rows if at >= cut and late.get(b, 0) > bound), default=killed_at
    )
    return {
        "p50 steady": pct(steady, 0.5), "p99 steady": pct(steady, 0.99),
        "p99 from the kill": pct(around, 0.99),
        "max from the kill": max(around, default=float("nan")),
        "bound": bound, "recovery s": max(0.0, last_late - killed_at) / 1000,
        "missing": len(rows) - len(late),
    }  # fmt: skip


def stream(sdk: DefaultMQProducer, topic: str, args: argparse.Namespace, delay: bool,
           kill) -> tuple[dict[str, float], float]:  # fmt: skip
    """Send at ``--rate`` for ``--seconds``, calling ``kill()`` after ``--kill-after``;
    returns (body -> send call ms, the kill's ms)."""
    sent: dict[str, float] = {}
    killed = [float("inf")]
    kill_seq = int(args.rate * args.kill_after)

    def send(seq: int) -> None:
        if seq == kill_seq:
            kill()
            killed[0] = now_ms()
        at = now_ms()
        body = f"S {seq}"
        sent[body] = at
        sdk.send_async(Message(topic, body, delay_time_level=1 if delay else 0))

    pace(args.rate, args.seconds, send, lambda: None)
    return sent, killed[0]


def members_with_partitions(bs: str, group_id: str) -> int:
    """How many members of ``group_id`` own partitions, the group being stable."""
    admin = AdminClient({"bootstrap.servers": bs})
    try:
        group = admin.describe_consumer_groups([group_id])[group_id].result(timeout=10)
    except (KafkaException, TimeoutError):  # no coordinator yet
        return 0
    if group.state != ConsumerGroupState.STABLE:
        return 0
    return sum(1 for m in group.members if m.assignment.topic_partitions)


def wait_until_count(count: Callable[[], int], expected: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while count() < expected and time.monotonic() < deadline:
        time.sleep(0.2)


def forwarders_run(bs: str, args: argparse.Namespace) -> dict[str, float]:
    ns = "so" + uuid.uuid4().hex[:8]
    levels = DelayLevels.parse(TABLE)
    provision_topology(
        {"bootstrap.servers": bs}, build_topology(topics=["Out"], levels=levels, namespace=ns)
    )
    out = to_kafka_topic("Out", ns)
    sdk = DefaultMQProducer("ScaleOutPG", bs, namespace=ns, message_delay_level=TABLE,
                            trace_enabled=args.trace == "on")  # fmt: skip
    sdk.start()
    trace = args.trace == "on"
    with contextlib.ExitStack() as stack:
        procs = [
            stack.enter_context(forwarder_process(bs, ns, TABLE, trace=trace, overrides=JOIN))
            for _ in range(2)
        ]
        wait_until_count(lambda: members_with_partitions(bs, forwarder_group(ns)), 2, 60)
        seen, _stop, out_file = stack.enter_context(child(reader, bs, [(out, partitions(bs, out))]))
        sdk.send(Message("Out", b"warm", delay_time_level=1))
        wait_until_count(lambda: seen.value, 1, 60)
        sent, killed = stream(sdk, "Out", args, True, procs[0].kill)
        wait_until_count(lambda: seen.value, len(sent) + 1, 60)
    received = {body: at for body, (_ts, at) in collected(out_file).items()}
    sdk.shutdown()
    return figures(sent, received, DELAY_MS, killed, args.recovered_ms)


def consumers_run(bs: str, args: argparse.Namespace) -> dict[str, float]:
    ns = "so" + uuid.uuid4().hex[:8]
    provision_topology({"bootstrap.servers": bs}, build_topology(topics=["Out"], namespace=ns))
    sdk = DefaultMQProducer("ScaleOutPG", bs, namespace=ns, trace_enabled=args.trace == "on")
    sdk.start()
    with tempfile.TemporaryDirectory() as tmp:
        logs = [Path(tmp) / f"consumer-{i}.log" for i in range(2)]
        with consumer_processes(bs, ns, args.trace == "on", logs) as procs:
            warm = [f"warm {i}" for i in range(40)]  # spread over the four partitions
            for body in warm:
                sdk.send(Message("Out", body))
            wait_until_count(lambda: len(seen_by(logs)), len(warm), 60)
            wait_until_count(lambda: members_with_partitions(bs, kafka_group_id(GROUP, ns)), 2, 60)
            sent, killed = stream(sdk, "Out", args, False, procs[0].kill)
            wait_until_count(lambda: len(seen_by(logs)), len(sent) + len(warm), 60)
        delivered = seen_by(logs)
    sdk.shutdown()
    return figures(sent, delivered, 0.0, killed, args.recovered_ms)


def show(title: str, runs: list[dict[str, float]]) -> None:
    print(f"\n{title} (medians of {len(runs)} runs)")
    for key in runs[0]:
        values = [run[key] for run in runs]
        print(f"  {key:>17}: {statistics.median(values):9.1f}   runs: "
              + ", ".join(f"{v:.1f}" for v in values))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--role", choices=["forwarders", "consumers", "both"], default="both")
    parser.add_argument("--rate", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--kill-after", type=float, default=10.0)
    parser.add_argument("--recovered-ms", type=float, default=200.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--trace", choices=["on", "off"], default="on")
    parser.add_argument(
        "--bootstrap-servers", default=os.environ.get("RMQCOMPAT_BOOTSTRAP_SERVERS")
    )
    args = parser.parse_args()
    if not 0 < args.kill_after < args.seconds:
        parser.error("--kill-after must be between 0 and --seconds")
    roles = ["forwarders", "consumers"] if args.role == "both" else [args.role]
    with contextlib.ExitStack() as stack:
        bs = args.bootstrap_servers
        if bs is None:
            cluster = DevCluster(nodes=3)
            bs = cluster.start()
            stack.callback(cluster.stop)
            print(f"broker: three-node dev cluster at {bs}", flush=True)
        print(f"load average before: {load()}", flush=True)
        for role in roles:
            run = forwarders_run if role == "forwarders" else consumers_run
            runs = [run(bs, args) for _ in range(args.runs)]
            what = f"{args.rate} msgs/s for {args.seconds:.0f} s, one of two SIGKILLed at "
            show(f"{role}: {what}{args.kill_after:.0f} s, trace {args.trace}; in ms", runs)
        print(f"\nload average after: {load()}")


if __name__ == "__main__":
    main()
