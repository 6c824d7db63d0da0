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
  0.3-0.5 s more for its producer id), produces every dead letter's body, key and headers
  as they are, with a delivery callback and ``poll(0)`` after each produce, then
  ``flush()``; done when every delivery report came back without an error.
- raw, warm: the same with a producer that already sent one record to the topic (its
  connection, producer id and topic metadata in place) when the clock starts: the floor
  of moving those bytes.
- replay: ``Replayer(...).run(letters)``, the whole replay as ``rmqcompat dlq replay``
  does it once the dead letters are read: its clients and connections, ensuring the
  retry and ledger topics (the ledger is created, as on a namespace's first replay),
  ``init_transactions`` (fencing), reading the group's ledger, then per chunk one
  transaction with the replayed messages (new message id, replay headers) and their
  ledger pages; the clock stops when ``run`` returned.

No side has a ledger, a transaction or a header rewrite but the replay.

Each run measures raw cold, raw warm, then the replay; prints the rates and the ratios
replay / raw per run, then the medians and the ratios of the medians.

    python benchmarks/replay.py [-n 20000] [--runs 3] [--bootstrap-servers HOST:PORT]

Without ``--bootstrap-servers`` it starts its own dev broker.
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid

from bench_broker import add_broker_options, broker
from confluent_kafka import Producer

from rmqcompat import properties as props
from rmqcompat.config import ClientConfig
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
        while True:
            try:
                producer.produce(physical, BODY, headers=props.to_headers(headers))
                break
            except BufferError:
                producer.poll(0.01)
    producer.flush()
    letters = list(read_dead_letters(ClientConfig(bootstrap, namespace=namespace), GROUP))
    if len(letters) != count:
        raise SystemExit(f"read {len(letters)} dead letters, wanted {count}")
    return letters


def raw_run(bootstrap: str, namespace: str, letters: list[DeadLetter], *, warm: bool) -> float:
    physical = to_kafka_topic(retry_topic(GROUP), namespace)
    failures = []

    def on_delivery(err, _msg) -> None:
        if err is not None:
            failures.append(err)

    start = time.perf_counter()
    producer = Producer({**PRODUCER_DEFAULTS, "bootstrap.servers": bootstrap})
    producer.list_topics(physical, timeout=10)
    if warm:
        producer.produce(physical, BODY)
        producer.flush(10)
        start = time.perf_counter()
    for letter in letters:
        while True:
            try:
                producer.produce(
                    physical,
                    letter.body,
                    letter.key,
                    headers=list(letter.headers),
                    on_delivery=on_delivery,
                )
                break
            except BufferError:
                producer.poll(0.001)
        producer.poll(0)
    unsent = producer.flush(30)
    elapsed = time.perf_counter() - start
    if failures or unsent:
        raise SystemExit(f"{len(failures) + unsent} raw sends failed: {failures[:1]}")
    return len(letters) / elapsed


def replay_run(bootstrap: str, namespace: str, letters: list[DeadLetter]) -> float:
    config = ClientConfig(bootstrap, namespace=namespace)
    replayer = Replayer(config, GROUP, Operator.current("benchmarks/replay.py"))
    start = time.perf_counter()
    summary = replayer.run(letters)
    elapsed = time.perf_counter() - start
    if summary.replayed != len(letters):
        raise SystemExit(f"replay incomplete: {summary}")
    return len(letters) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--messages", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    add_broker_options(parser)
    args = parser.parse_args()
    replay: list[float] = []
    raw: dict[str, list[float]] = {"cold": [], "warm": []}
    with broker(args) as bootstrap:
        for run in range(1, args.runs + 1):
            namespace = f"bench{uuid.uuid4().hex[:8]}"
            letters = dead_letters(bootstrap, namespace, args.messages)
            for kind, rates in raw.items():
                rates.append(raw_run(bootstrap, namespace, letters, warm=kind == "warm"))
            replay.append(replay_run(bootstrap, namespace, letters))
            print(
                f"run {run}: replay {replay[-1]:,.0f} msgs/s; raw cold {raw['cold'][-1]:,.0f} "
                f"(ratio {replay[-1] / raw['cold'][-1]:.2f}), raw warm {raw['warm'][-1]:,.0f} "
                f"(ratio {replay[-1] / raw['warm'][-1]:.2f})"
            )
    replay_median = statistics.median(replay)
    print(f"median replay:   {replay_median:,.0f} msgs/s ({args.messages} x 200 B)")
    for kind, rates in raw.items():
        median = statistics.median(rates)
        print(
            f"median raw {kind}: {median:,.0f} msgs/s, "
            f"ratio replay/raw {replay_median / median:.2f}"
        )


if __name__ == "__main__":
    main()
