"""FIFO message groups sharing one partition, one group stuck: the other group's rate.

One topic with one partition holds ``--messages`` FIFO messages, alternating between
group ``stuck`` and group ``free`` (sent by the 5.x Producer with ``message_group``).
Three consumers read it, each a fresh group from the first offset:

- lanes, both free: the 5.x PushConsumer, every message acked at once; the rate of
  group ``free`` (its messages / time from its first to its last);
- lanes, one stuck: the same, but the listener blocks on the first ``stuck`` message
  until every ``free`` message is done; the rate of group ``free``;
- partition order, one stuck: rmqcompat's orderly push consumer (one call per
  partition at a time, as a partition-ordered Kafka consumer); the listener blocks on
  the first ``stuck`` message for ``--window`` seconds: how many ``free`` messages
  were handled meanwhile.

    python benchmarks/fifo_lanes.py [--messages 1000] [--window 5] [--bootstrap-servers h:p]

The stuck group's waiting messages stay in the partition's process queue; once they
exceed the PushConsumer's ``max_cache_message_count`` (1024) the partition pauses for
every group (docs/rocketmq5.md, "FIFO bound"), so with ``--messages`` above about 2000
the "one stuck" run never finishes: that is the bound, not a hang of the benchmark.
"""

from __future__ import annotations

import argparse
import threading
import time
import uuid
from typing import Any

from bench_broker import add_broker_options, broker
from consume import NS, OVERRIDES

from rmqcompat.consumer import (
    ConsumeFromWhere,
    ConsumeOrderlyStatus,
    DefaultMQPushConsumer,
    MessageListenerOrderly,
)
from rmqcompat.topics.provision import ensure_topics
from rmqcompat.topics.spec import TopicSpec
from rmqcompat.v5 import (
    ClientConfiguration,
    ConsumeResult,
    FilterExpression,
    Message,
    MessageListener,
    Producer,
    PushConsumer,
)
from rmqcompat.v5.message import MESSAGE_GROUP


def fill(config: ClientConfiguration, bootstrap: str, topic: str, count: int) -> None:
    ensure_topics({"bootstrap.servers": bootstrap}, {topic: TopicSpec(1)}, NS)
    producer = Producer(config)
    producer.startup()
    futures = []
    for i in range(count):
        msg = Message()
        msg.topic, msg.body = topic, b"x" * 200
        msg.message_group = "stuck" if i % 2 == 0 else "free"
        futures.append(producer.send_async(msg))
    for future in futures:
        future.result()
    producer.shutdown()


class Lanes(MessageListener):
    def __init__(self, free_total: int, stuck: bool) -> None:
        self.free_total, self.stuck = free_total, stuck
        self.free_times: list[float] = []
        self.done = threading.Event()

    def consume(self, message: Message) -> ConsumeResult:
        if message.message_group == "free":
            self.free_times.append(time.perf_counter())
            if len(self.free_times) == self.free_total:
                self.done.set()
        elif self.stuck:
            self.done.wait()
        return ConsumeResult.SUCCESS


def lanes(config: ClientConfiguration, topic: str, free_total: int, stuck: bool) -> float:
    listener = Lanes(free_total, stuck)
    group = f"lanes-{uuid.uuid4().hex[:12]}"
    consumer = PushConsumer(config, group, listener, {topic: FilterExpression()})
    consumer.startup()
    listener.done.wait()
    consumer.shutdown()
    times = listener.free_times
    return (len(times) - 1) / (times[-1] - times[0])


class Ordered(MessageListenerOrderly):
    def __init__(self, window_s: float) -> None:
        self.window_s = window_s
        self.free = 0
        self.blocked = threading.Event()

    def consume_message(self, msgs: list[Any], context: Any) -> ConsumeOrderlyStatus:
        for msg in msgs:
            if msg.properties.get(MESSAGE_GROUP) == "free":
                self.free += 1
            elif not self.blocked.is_set():
                self.blocked.set()
                time.sleep(self.window_s)
        return ConsumeOrderlyStatus.SUCCESS


def ordered(bootstrap: str, topic: str, window_s: float) -> int:
    listener = Ordered(window_s)
    consumer = DefaultMQPushConsumer(
        f"ordered-{uuid.uuid4().hex[:12]}",
        bootstrap,
        namespace=NS,
        kafka_config=OVERRIDES,
        consume_from_where=ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET,
    )
    consumer.subscribe(topic)
    consumer.register_message_listener(listener)
    consumer.start()
    listener.blocked.wait()
    time.sleep(window_s * 0.9)
    handled = listener.free
    consumer.shutdown()
    return handled


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--window", type=float, default=5.0)
    add_broker_options(parser)
    args = parser.parse_args()
    with broker(args) as bootstrap:
        config = ClientConfiguration(bootstrap, None, NS, kafka_config=OVERRIDES)
        topic = f"fifo-{uuid.uuid4().hex[:8]}"
        fill(config, bootstrap, topic, args.messages)
        free_total = args.messages // 2
        both = lanes(config, topic, free_total, stuck=False)
        one = lanes(config, topic, free_total, stuck=True)
        held = ordered(bootstrap, topic, args.window)
        print(f"lanes, both groups free: group free {both:,.0f} msg/s")
        print(f"lanes, group stuck blocked: group free {one:,.0f} msg/s ({one / both:.2f} of it)")
        print(
            f"partition order, group stuck blocked {args.window:.0f} s: "
            f"{held} of {free_total} free messages handled meanwhile"
        )


if __name__ == "__main__":
    main()
