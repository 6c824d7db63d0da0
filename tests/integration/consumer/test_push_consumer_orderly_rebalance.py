"""Two orderly members of one group and rebalances while listener calls run: no partition
is ever consumed by both members at once, and per-key order holds across the handovers
(a member's revoke waits for its running call of that partition)."""

from __future__ import annotations

import threading
import time
from collections import defaultdict

import pytest
from consumer_fixtures import consumer_env  # noqa: F401 - the env fixture
from consumer_helpers import create_topic, make_consumer
from waiting import wait_until

from rmqcompat import ConsumeOrderlyStatus, DefaultMQProducer, Message, MessageListenerOrderly

pytestmark = pytest.mark.integration

KEYS = [f"key-{k}" for k in range(8)]
PER_KEY = 10
CALL_S = 0.05
#: listener calls while the second member joins: longer than a rebalance takes (about
#: 1 s on Apache Kafka), so a revoke that did not wait would hand over a partition
#: whose call still runs
SLOW_CALL_S = 2.5


class Journal:
    """Every listener call of every member: (member, partition, start, end, key/seq pairs),
    and deliveries that came before an earlier message of their key had succeeded."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: list[tuple[str, int, float, float]] = []
        self.succeeded: dict[str, set[int]] = defaultdict(set)
        self.out_of_order: list[str] = []
        self.slow = threading.Event()

    def listener(self, member: str) -> MessageListenerOrderly:
        journal = self

        class Member(MessageListenerOrderly):
            def consume_message(self, msgs, context):
                start = time.monotonic()
                pairs = [(k, int(s)) for k, s in (m.body.decode().split(":") for m in msgs)]
                with journal.lock:
                    for key, seq in pairs:
                        missing = set(range(seq)) - journal.succeeded[key]
                        if missing:
                            journal.out_of_order.append(f"{member}: {key} {seq} before {missing}")
                time.sleep(SLOW_CALL_S if journal.slow.is_set() else CALL_S)
                with journal.lock:
                    journal.calls.append(
                        (member, context.message_queue.queue_id, start, time.monotonic())
                    )
                    for key, seq in pairs:
                        journal.succeeded[key].add(seq)
                return ConsumeOrderlyStatus.SUCCESS

        return Member()

    def done(self) -> int:
        with self.lock:
            return sum(len(v) for v in self.succeeded.values())

    def overlaps(self) -> list[tuple]:
        """Pairs of calls of different members on the same partition that overlapped."""
        with self.lock:
            calls = list(self.calls)
        return [
            (a, b)
            for i, a in enumerate(calls)
            for b in calls[i + 1 :]
            if a[0] != b[0] and a[1] == b[1] and a[2] < b[3] and b[2] < a[3]
        ]


def test_a_partition_is_never_consumed_by_two_members_at_once(env):
    bootstrap, overrides, ns, group, _ = env
    topic = env.topic + "R"
    create_topic(bootstrap, topic, ns, partitions=4)
    with DefaultMQProducer("P", bootstrap, namespace=ns, kafka_config=overrides) as producer:
        for seq in range(PER_KEY):
            for key in KEYS:
                producer.send_orderly(Message(topic, body=f"{key}:{seq}".encode()), key)
    journal = Journal()

    def member(name: str):
        consumer = make_consumer(bootstrap, overrides, ns, group, consume_thread_max=4)
        consumer.subscribe(topic)
        consumer.register_message_listener(journal.listener(name))
        consumer.start()
        return consumer

    total = len(KEYS) * PER_KEY
    first = member("A")
    wait_until(lambda: journal.done() >= total // 5, what="A consuming")
    journal.slow.set()
    time.sleep(0.2)  # every partition of A is in a slow call now
    second = member("B")  # rebalance: A gives partitions to B mid-call
    wait_until(lambda: any(c[0] == "B" for c in journal.calls), what="B consuming")
    journal.slow.clear()
    wait_until(lambda: journal.done() >= total // 2, what="A and B consuming")
    members = {c[0] for c in journal.calls}
    first.shutdown()  # rebalance: B takes A's partitions
    try:
        wait_until(lambda: journal.done() >= total, timeout=60, what="everything")
    finally:
        second.shutdown()

    assert members == {"A", "B"}  # both consumed before A left
    assert journal.overlaps() == []
    assert journal.out_of_order == []
