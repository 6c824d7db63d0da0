"""Success-path throughput: DefaultMQPushConsumer vs a raw confluent-kafka consume loop.

Both read the same pre-filled topic (rmqcompat headers on every record) in the same run,
each with a fresh group, several runs; prints medians and the SDK/raw ratio (target >= 0.7).

    python benchmarks/consume.py [--messages 200000] [--runs 3] [--bootstrap host:port]

Without --bootstrap (or RMQCOMPAT_BOOTSTRAP_SERVERS) it starts the Tansu dev broker.
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time
import uuid

from confluent_kafka import Consumer, Producer

from rmqcompat import properties as props
from rmqcompat.consumer.listener import ConsumeConcurrentlyStatus, ConsumeFromWhere
from rmqcompat.consumer.push_consumer import DefaultMQPushConsumer
from rmqcompat.dev_broker import DevBroker
from rmqcompat.message_id import new_message_id
from rmqcompat.topics.naming import to_kafka_topic
from rmqcompat.topics.provision import ensure_topics
from rmqcompat.topics.spec import TopicSpec

NS = "bench"
OVERRIDES = {"session.timeout.ms": 2000, "heartbeat.interval.ms": 200, "fetch.wait.max.ms": 50}


def fill(bootstrap: str, topic: str, count: int, size: int) -> None:
    ensure_topics({"bootstrap.servers": bootstrap}, {topic: TopicSpec(4)}, NS)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    body = b"x" * size
    physical = to_kafka_topic(topic, NS)
    for _ in range(count):
        headers = props.to_headers({props.UNIQ_KEY: new_message_id(), props.TAGS: "A"})
        while True:
            try:
                producer.produce(physical, body, headers=headers)
                break
            except BufferError:
                producer.poll(0.05)
    producer.flush()


def raw(bootstrap: str, topic: str, count: int) -> float:
    consumer = Consumer(
        {
            **OVERRIDES,
            "bootstrap.servers": bootstrap,
            "group.id": f"raw-{uuid.uuid4().hex}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": True,
        }
    )
    consumer.subscribe([to_kafka_topic(topic, NS)])
    seen, start = 0, None
    while seen < count:
        for msg in consumer.consume(500, 1.0):
            if msg.error() is None:
                start = start or time.perf_counter()
                msg.value()
                seen += 1
    elapsed = time.perf_counter() - start
    consumer.close()
    return count / elapsed


def sdk(bootstrap: str, topic: str, count: int, batch: int) -> float:
    done = threading.Event()
    lock = threading.Lock()
    state = {"seen": 0, "start": None}

    def listener(msgs, ctx):
        with lock:
            state["start"] = state["start"] or time.perf_counter()
            state["seen"] += len(msgs)
            if state["seen"] >= count:
                done.set()
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    consumer = DefaultMQPushConsumer(
        f"sdk-{uuid.uuid4().hex[:12]}",
        bootstrap_servers=bootstrap,
        namespace=NS,
        kafka_config=OVERRIDES,
        consume_from_where=ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET,
    )
    consumer.subscribe(topic)
    consumer.register_message_listener(listener)
    consumer.start()
    done.wait()
    elapsed = time.perf_counter() - state["start"]
    consumer.shutdown()
    return count / elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=1, help="consume_message_batch_max_size")
    parser.add_argument("--bootstrap", default=os.environ.get("RMQCOMPAT_BOOTSTRAP_SERVERS"))
    args = parser.parse_args()
    broker = None if args.bootstrap else DevBroker()
    bootstrap = args.bootstrap or broker.start()
    try:
        topic = f"bench-{uuid.uuid4().hex[:8]}"
        fill(bootstrap, topic, args.messages, args.size)
        raws, sdks = [], []
        for run in range(args.runs):
            raws.append(raw(bootstrap, topic, args.messages))
            sdks.append(sdk(bootstrap, topic, args.messages, args.batch))
            print(f"run {run + 1}: raw {raws[-1]:,.0f} msg/s  sdk {sdks[-1]:,.0f} msg/s")
        r, s = statistics.median(raws), statistics.median(sdks)
        print(f"median: raw {r:,.0f} msg/s  sdk {s:,.0f} msg/s  ratio {s / r:.2f} (target >= 0.7)")
    finally:
        if broker:
            broker.stop()


if __name__ == "__main__":
    main()
