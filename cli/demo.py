"""The retry demo: ten orders, some fail a few times, one always fails and is dead-lettered.

It runs the real pieces end to end on a real broker: a producer, a concurrent push
consumer whose listener fails on purpose, the delay-forwarder and a second group that
reads the dead-letter topic. A short delay table keeps the whole ladder in seconds.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rmqcompat.consumer.listener import ConsumeConcurrentlyContext, ConsumeConcurrentlyStatus
from rmqcompat.consumer.listener import ConsumeFromWhere as FromWhere
from rmqcompat.consumer.push_consumer import DefaultMQPushConsumer
from rmqcompat.forwarder import DelayForwarder
from rmqcompat.message import Message, MessageExt
from rmqcompat.producer import DefaultMQProducer
from rmqcompat.properties import RETRY_TOPIC
from rmqcompat.retry import retry_level
from rmqcompat.topics.delay_levels import DelayLevels, format_duration_ms
from rmqcompat.topics.naming import dlq_topic
from rmqcompat.topics.provision import ensure_topics
from rmqcompat.topics.spec import TopicSpec

DEMO_DELAY_LEVEL = "100ms 200ms 500ms 1s 2s 3s 4s 5s 6s 7s 8s 9s 10s 20s 30s 1m 2m 3m"
MAX_RECONSUME_TIMES = 3
ORDERS = [f"order-{n}" for n in range(10)]
#: How many times each order fails before it succeeds; None = it always fails.
FAILURES: dict[str, int | None] = {"order-3": 2, "order-7": 1, "order-9": None}
#: Group joins are bounded by session timeouts; 6 s is the smallest Apache Kafka accepts.
DEMO_KAFKA_CONFIG = {
    "session.timeout.ms": 6000,
    "heartbeat.interval.ms": 500,
    "log.connection.close": False,
}
DEADLINE_S = 50.0

Say = Callable[[str], None]


@dataclass
class DemoOutcome:
    """What happened to each order; ``ok`` when it is exactly what the demo expects."""

    deliveries: dict[str, int] = field(default_factory=dict)
    succeeded: set[str] = field(default_factory=set)
    dead_letters: dict[str, MessageExt] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def expected_done(self) -> bool:
        return self.succeeded == {o for o in ORDERS if FAILURES.get(o, 0) is not None} and set(
            self.dead_letters
        ) == {o for o, n in FAILURES.items() if n is None}

    def ok(self) -> bool:
        if not self.expected_done():
            return False
        for order in ORDERS:
            fails = FAILURES.get(order, 0)
            want = MAX_RECONSUME_TIMES + 1 if fails is None else fails + 1
            if self.deliveries.get(order) != want:
                return False
        return True


class DemoListener:
    """Fails orders on purpose as :data:`FAILURES` says and narrates each delivery."""

    def __init__(self, outcome: DemoOutcome, levels: DelayLevels, say: Say) -> None:
        self._outcome = outcome
        self._levels = levels
        self._say = say

    def consume_message(
        self, msgs: list[MessageExt], context: ConsumeConcurrentlyContext
    ) -> ConsumeConcurrentlyStatus:
        msg = msgs[0]
        order = msg.body.decode()
        with self._outcome.lock:
            self._outcome.deliveries[order] = self._outcome.deliveries.get(order, 0) + 1
        fails = FAILURES.get(order, 0)
        if fails is None or msg.reconsume_times < fails:
            self._say(self._failure_line(order, msg.reconsume_times))
            return ConsumeConcurrentlyStatus.RECONSUME_LATER
        with self._outcome.lock:
            self._outcome.succeeded.add(order)
        self._say(f"  {order}: consumed (attempt {msg.reconsume_times + 1}, topic {msg.topic})")
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    def _failure_line(self, order: str, reconsume_times: int) -> str:
        if reconsume_times >= MAX_RECONSUME_TIMES:
            return f"  {order}: failed (attempt {reconsume_times + 1}) -> dead-letter topic"
        level = retry_level(self._levels, reconsume_times)
        wait = format_duration_ms(self._levels.delay_ms(level))
        return (
            f"  {order}: failed (attempt {reconsume_times + 1}) -> retry on delay level "
            f"{level} ({wait})"
        )


def run_demo(bootstrap_servers: str, say: Say = print) -> DemoOutcome:
    """Run the demo against ``bootstrap_servers``; returns what happened (see ``ok()``)."""
    suffix = uuid.uuid4().hex[:8]
    namespace, group, topic = f"demo-{suffix}", "DemoGroup", "DemoOrders"
    common: dict[str, Any] = {
        "bootstrap_servers": bootstrap_servers,
        "namespace": namespace,
        "message_delay_level": DEMO_DELAY_LEVEL,
        "kafka_config": DEMO_KAFKA_CONFIG,
    }
    ensure_topics({"bootstrap.servers": bootstrap_servers}, {topic: TopicSpec(2)}, namespace)
    say(f"namespace {namespace}: topic {topic}, group {group}, max_reconsume_times 3")
    outcome = DemoOutcome()
    consumer = DefaultMQPushConsumer(
        group,
        consume_from_where=FromWhere.CONSUME_FROM_FIRST_OFFSET,
        max_reconsume_times=MAX_RECONSUME_TIMES,
        **common,
    )
    consumer.subscribe(topic)
    consumer.register_message_listener(
        DemoListener(outcome, DelayLevels.parse(DEMO_DELAY_LEVEL), say)
    )
    dlq_reader = _dlq_reader(group, outcome, say, common)
    with (
        DelayForwarder(**common),
        consumer,
        dlq_reader,
        DefaultMQProducer("DemoProducer", **common) as producer,
    ):
        for order in ORDERS:
            result = producer.send(Message(topic, body=order, keys=order, tags="order"))
            queue = result.message_queue  # None only when spooled; the demo has no spool
            where = "the spool" if queue is None else f"queue {queue.queue_id}"
            say(f"sent {order} as {result.msg_id} to {where}")
        _wait(outcome)
    return outcome


def _dlq_reader(
    group: str, outcome: DemoOutcome, say: Say, common: dict[str, Any]
) -> DefaultMQPushConsumer:
    def on_dead_letter(
        msgs: list[MessageExt], _: ConsumeConcurrentlyContext
    ) -> ConsumeConcurrentlyStatus:
        for msg in msgs:
            order = msg.body.decode()
            with outcome.lock:
                outcome.dead_letters[order] = msg
            origin = msg.get_property(RETRY_TOPIC)
            say(
                f"  {order}: read from {dlq_topic(group)} (RETRY_TOPIC={origin}, "
                f"RECONSUME_TIME={msg.reconsume_times})"
            )
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    reader = DefaultMQPushConsumer(
        "DemoDeadLetterReader", consume_from_where=FromWhere.CONSUME_FROM_FIRST_OFFSET, **common
    )
    reader.subscribe(dlq_topic(group))
    reader.register_message_listener(on_dead_letter)
    return reader


def _wait(outcome: DemoOutcome) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline and not outcome.expected_done():
        time.sleep(0.1)


def summary(outcome: DemoOutcome) -> list[str]:
    """One line per order and a verdict."""
    lines = []
    for order in ORDERS:
        if order in outcome.succeeded:
            end = "consumed"
        elif order in outcome.dead_letters:
            end = "dead-lettered"
        else:
            end = "NOT FINISHED"
        lines.append(f"  {order}: {outcome.deliveries.get(order, 0)} deliveries, {end}")
    verdict = "every message ended as expected" if outcome.ok() else "UNEXPECTED OUTCOME"
    lines.append(verdict)
    return lines
