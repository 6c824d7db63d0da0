"""Dead-letter replay throughput: ``Replayer.run`` vs raw confluent-kafka ``produce`` of the
same records.

Each run gets a fresh namespace whose ``%DLQ%G`` holds ``-n`` dead letters (200-byte
bodies, the headers a consumer's send-back writes), read into memory outside the clock.

- raw: an idempotent ``Producer`` (``PRODUCER_DEFAULTS``) produces every dead letter's
  body, key and headers to the group's retry topic, ``poll(0)`` after each produce, clock
  stops after ``flush()``. No ledger, no transaction: the floor of moving those bytes.
- replay: ``Replayer(...).run(letters)``: the whole replay as ``rmqcompat dlq replay``
  does it after reading: ensuring the retry and ledger topics, ``init_transactions``
  (fencing), reading the group's ledger, then per chunk of 500 one transaction with the
  replayed messages and their ledger entries; clock stops when ``run`` returned.

Runs alternate raw/replay; prints msgs/s per run, the medians and the ratio replay / raw.

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


def raw_run(bootstrap: str, namespace: str, letters: list[DeadLetter]) -> float:
    producer = Producer({**PRODUCER_DEFAULTS, "bootstrap.servers": bootstrap})
    failures = []

    def on_delivery(err, _msg) -> None:
        if err is not None:
            failures.append(err)

    physical = to_kafka_topic(retry_topic(GROUP), namespace)
    producer.produce(physical, BODY)
    producer.flush()
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
    producer.flush()
    elapsed = time.perf_counter() - start
    if failures:
        raise SystemExit(f"{len(failures)} raw sends failed: {failures[0]}")
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
    replay, raw = [], []
    with broker(args) as bootstrap:
        for run in range(1, args.runs + 1):
            namespace = f"bench{uuid.uuid4().hex[:8]}"
            letters = dead_letters(bootstrap, namespace, args.messages)
            raw.append(raw_run(bootstrap, namespace, letters))
            replay.append(replay_run(bootstrap, namespace, letters))
            print(f"run {run}: replay {replay[-1]:,.0f} msgs/s, raw produce {raw[-1]:,.0f}")
    replay_median, raw_median = statistics.median(replay), statistics.median(raw)
    print(f"median replay:      {replay_median:,.0f} msgs/s ({args.messages} x 200 B)")
    print(f"median raw produce: {raw_median:,.0f} msgs/s")
    print(f"ratio replay/raw:   {replay_median / raw_median:.2f}")


if __name__ == "__main__":
    main()
