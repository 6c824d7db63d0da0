"""Dead-letter replay throughput: ``Replayer.run`` vs raw confluent-kafka ``produce`` of the
same records, in the same run.

Each run gets a fresh namespace whose ``%DLQ%G`` holds ``-n`` dead letters (200-byte
bodies, the headers a consumer's send-back writes) and whose retry topic exists; they are
read into memory once, outside the clock, and every side sends exactly those records to
the group's retry topic; each side stops its clock when the broker acknowledged
everything. Two raw figures, because a replay is a one-shot job that pays its clients'
start-up and a steady producer does not:

- raw, cold: from nothing, like the replay: creates an idempotent ``Producer``
  (``PRODUCER_DEFAULTS``), connects (``list_topics``; without it librdkafka often waits
  0.3-0.5 s more for its producer id), produces every message the replay sends (body,
  key and the replay's headers, built outside the clock), with a delivery callback and
  ``poll(0)`` after each produce, then ``flush()``; done when every delivery report came
  back without an error.
- raw, warm: the same with a producer that already sent one record to the topic (its
  connection, producer id and topic metadata in place) when the clock starts: the floor
  of moving those bytes.
- replay: ``Replayer(...).run(letters)``, the whole replay as ``rmqcompat dlq replay``
  does it once the dead letters are read: its clients and connections, ensuring the
  retry and ledger topics (the ledger is created, as on a namespace's first replay),
  ``init_transactions`` (fencing), reading the group's ledger, then per chunk one
  transaction with the replayed messages (new message id, replay headers) and their
  ledger pages; the clock stops when ``run`` returned. With ``--trace on`` (the CLI's
  default) it also writes one REPLAY trace event per message, ``off`` none; ``both``
  (default) measures each, the second in a namespace of its own over the same letters.

The same records: both sides send the same messages: every dead letter's body and key with
the headers the replay writes (the dead letter's 6, about 175 bytes, rewritten into 7,
about 230: new ``UNIQ_KEY``, ``REPLAY_ID``, ``REPLAY_TIME``, the count reset,
``MAX_RECONSUME_TIMES`` dropped), about 430 bytes a message. Only the replay writes ledger
pages (about 95 bytes a message more in format 2: 1.2 times the bytes; 180 and 1.4 times
in format 1), runs transactions and rewrites headers on the clock. The raw side calls
``produce`` with keywords and a delivery callback, as an application that wants each
outcome does; the replay passes its arguments positionally and no callback (its commit is
the acknowledgement). Each side starts from copies of the dead letters as read (nothing
decoded yet), so none profits from decoding another side did. The default count (100,000)
keeps the replay's fixed set-up (creating the ledger topic, fencing: 0.2-0.5 s) to a few
percent of a run.

Each run measures raw cold, raw warm, then the replay(s); prints the rates and the
ratios replay / raw per run, then the medians and the ratios of the medians.

    python benchmarks/replay.py [-n 100000] [--runs 3] [--trace off|on|both]
                                [--bootstrap-servers HOST:PORT]

Without ``--bootstrap-servers`` it starts its own dev broker.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
import uuid

from bench_broker import add_broker_options, broker, produce_waiting
from confluent_kafka import Producer

from rmqcompat import properties as props
from rmqcompat.cli.collector import collector_paused
from rmqcompat.clock import epoch_ms
from rmqcompat.config import ClientConfig
from rmqcompat.dlq.chunk import ChunkBuilder, Pending, Record
from rmqcompat.dlq.ledger import ledger_topic
from rmqcompat.dlq.model import DeadLetter
from rmqcompat.dlq.reader import read_dead_letters
from rmqcompat.dlq.replay import Operator, Replayer
from rmqcompat.producer.settings import PRODUCER_DEFAULTS
from rmqcompat.topics.naming import dlq_topic, retry_topic, to_kafka_topic
from rmqcompat.topics.provision import ensure_topics
from rmqcompat.topics.spec import TopicSpec, TopologySpec

BODY = b"x" * 200
GROUP = "BenchG"


def dead_letters(bootstrap: str, namespace: str, count: int) -> list[DeadLetter]:
    """``count`` dead letters in the namespace's ``%DLQ%G``, read back."""
    admin = {"bootstrap.servers": bootstrap}
    ensure_topics(
        admin, {dlq_topic(GROUP): TopicSpec(1), retry_topic(GROUP): TopologySpec().retry}, namespace
    )
    producer = Producer({**PRODUCER_DEFAULTS, **admin})
    physical = to_kafka_topic(dlq_topic(GROUP), namespace)
    prefix = uuid.uuid4().hex[:16].upper()
    for seq in range(count):
        msg_id = f"{prefix}{seq:016X}"
        headers = {
            props.UNIQ_KEY: msg_id,
            props.ORIGIN_MESSAGE_ID: msg_id,
            props.RETRY_TOPIC: "BenchTopic",
            props.RECONSUME_TIME: "17",
            props.MAX_RECONSUME_TIMES: "16",
            props.BORN_TIMESTAMP: str(time.time_ns() // 1_000_000),
        }
        produce_waiting(producer, physical, BODY, headers=props.to_headers(headers))
    producer.flush()
    letters = list(read_dead_letters(ClientConfig(bootstrap, namespace=namespace), GROUP))
    if len(letters) != count:
        raise SystemExit(f"read {len(letters)} dead letters, wanted {count}")
    return letters


def replayed_records(namespace: str, letters: list[DeadLetter]) -> list[Record]:
    """The messages a replay of ``letters`` sends (its headers, new message ids), built
    outside the clock: what the raw side sends, so both sides move the same bytes."""
    builder = ChunkBuilder(
        GROUP, "retry", namespace, ledger_topic(namespace), Operator.current("benchmark")
    )
    pending: list[Pending] = [(letter, retry_topic(GROUP), 0) for letter in as_read(letters)]
    return list(builder.build(pending, epoch_ms()).records)  # not the ledger pages


def as_read(letters: list[DeadLetter]) -> list[DeadLetter]:
    """Copies of ``letters`` with nothing derived yet (a dead letter decodes its headers
    once, when first asked): each side starts from the dead letters as read."""
    return [dataclasses.replace(letter) for letter in letters]


def raw_run(bootstrap: str, records: list[Record], *, warm: bool) -> float:
    failures = []

    def on_delivery(err, _msg) -> None:
        if err is not None:
            failures.append(err)

    start = time.perf_counter()
    producer = Producer({**PRODUCER_DEFAULTS, "bootstrap.servers": bootstrap})
    physical = records[0][0]
    producer.list_topics(physical, timeout=10)
    if warm:
        producer.produce(physical, BODY)
        producer.flush(10)
        start = time.perf_counter()
    for topic, value, key, headers in records:
        while True:
            try:
                producer.produce(topic, value, key, headers=headers, on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.001)
        producer.poll(0)
    unsent = producer.flush(30)
    elapsed = time.perf_counter() - start
    if failures or unsent:
        raise SystemExit(f"{len(failures) + unsent} raw sends failed: {failures[:1]}")
    return len(records) / elapsed


def replay_run(bootstrap: str, namespace: str, letters: list[DeadLetter], *, trace: bool) -> float:
    config = ClientConfig(bootstrap, namespace=namespace)
    replayer = Replayer(
        config, GROUP, Operator.current("benchmarks/replay.py"), trace_enabled=trace
    )
    start = time.perf_counter()
    with collector_paused():  # as `rmqcompat dlq replay` runs it
        summary = replayer.run(letters)
    elapsed = time.perf_counter() - start
    if summary.replayed != len(letters):
        raise SystemExit(f"replay incomplete: {summary}")
    return len(letters) / elapsed


def _ratios(replay: float, raw: dict[str, float]) -> str:
    return ", ".join(f"replay/raw {kind} {replay / rate:.2f}" for kind, rate in raw.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--messages", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--trace",
        choices=("off", "on", "both"),
        default="both",
        help="replay with REPLAY trace events off, on (the CLI's default), or both",
    )
    add_broker_options(parser)
    args = parser.parse_args()
    traces = {"off": [False], "on": [True], "both": [False, True]}[args.trace]
    raw: dict[str, list[float]] = {"cold": [], "warm": []}
    replay: dict[bool, list[float]] = {trace: [] for trace in traces}
    with broker(args) as bootstrap:
        for run in range(1, args.runs + 1):
            namespace = f"bench{uuid.uuid4().hex[:8]}"
            letters = dead_letters(bootstrap, namespace, args.messages)
            records = replayed_records(namespace, letters)
            for kind, rates in raw.items():
                rates.append(raw_run(bootstrap, records, warm=kind == "warm"))
            line = f"run {run}: raw cold {raw['cold'][-1]:,.0f}, warm {raw['warm'][-1]:,.0f}"
            for trace, rates in replay.items():
                # each replay in a namespace of its own (its ledger and retry topic new, as
                # in the first one), over the same dead letters
                target = namespace if trace == traces[0] else fresh_namespace(bootstrap)
                rates.append(replay_run(bootstrap, target, as_read(letters), trace=trace))
                runs = {kind: rates_[-1] for kind, rates_ in raw.items()}
                line += f"; replay trace {_on(trace)} {rates[-1]:,.0f} ({_ratios(rates[-1], runs)})"
            print(line, flush=True)
    raw_medians = {kind: statistics.median(rates) for kind, rates in raw.items()}
    print(f"{args.messages} dead letters x 200 B, medians of {args.runs} runs (msgs/s):")
    for kind, median in raw_medians.items():
        print(f"  raw {kind}: {median:,.0f}")
    for trace, rates in replay.items():
        median = statistics.median(rates)
        print(f"  replay, trace {_on(trace)}: {median:,.0f} ({_ratios(median, raw_medians)})")


def _on(trace: bool) -> str:
    return "on" if trace else "off"


def fresh_namespace(bootstrap: str) -> str:
    """A new namespace whose retry topic exists, like the one :func:`dead_letters` fills."""
    namespace = f"bench{uuid.uuid4().hex[:8]}"
    admin = {"bootstrap.servers": bootstrap}
    ensure_topics(admin, {retry_topic(GROUP): TopologySpec().retry}, namespace)
    return namespace


if __name__ == "__main__":
    main()
