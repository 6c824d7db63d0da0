"""Orderly consumption on a real broker (SEMANTICS section 8): one partition at a time in
offset order, partitions in parallel; a suspended batch is retried in place at the fixed
interval (the partition waits, others go on), then dead-lettered; per-key order holds
end to end across suspensions and a consumer restart."""

from __future__ import annotations

import itertools
import threading
import time
from collections import defaultdict

import pytest
from consumer_fixtures import consumer_env  # noqa: F401 - the env fixture
from consumer_helpers import create_topic, make_consumer, produce
from waiting import wait_until

from rmqcompat import (
    ConsumeOrderlyStatus,
    DefaultMQProducer,
    Message,
    MessageListenerOrderly,
)
from rmqcompat import properties as props
from rmqcompat.topics.naming import dlq_topic

pytestmark = pytest.mark.integration

SUCCESS = ConsumeOrderlyStatus.SUCCESS
SUSPEND = ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT


class Recording(MessageListenerOrderly):
    """Records every call (partition, body, reconsume times, monotonic start and end) and
    the calls running at once per partition; ``behave(msg, ctx)`` gives the status."""

    def __init__(self, behave=lambda msgs, ctx: SUCCESS, work_s: float = 0.0) -> None:
        self.behave = behave
        self.work_s = work_s
        self.calls: list[tuple[int, list[bytes], list[int], float, float]] = []
        self.lock = threading.Lock()
        self.active: dict[int, int] = defaultdict(int)
        self.max_active_per_partition = 0
        self.max_active = 0

    def consume_message(self, msgs, context):
        part = context.message_queue.queue_id
        with self.lock:
            self.active[part] += 1
            self.max_active_per_partition = max(self.max_active_per_partition, self.active[part])
            self.max_active = max(self.max_active, sum(self.active.values()))
        start = time.monotonic()
        try:
            time.sleep(self.work_s)
            return self.behave(msgs, context)
        finally:
            end = time.monotonic()
            with self.lock:
                self.active[part] -= 1
                self.calls.append(
                    (part, [m.body for m in msgs], [m.reconsume_times for m in msgs], start, end)
                )

    def bodies(self, partition: int | None = None) -> list[bytes]:
        with self.lock:
            return [b for p, bs, _, _, _ in self.calls if partition in (None, p) for b in bs]

    def calls_of(self, body: bytes) -> list[tuple[int, float]]:
        """(reconsume times, start) of every call that carried ``body``."""
        with self.lock:
            return [(rt[bs.index(body)], start) for _, bs, rt, start, _ in self.calls if body in bs]


def _consumer(env, listener: MessageListenerOrderly, topic: str | None = None, **settings):
    """A consumer of the env's group on ``topic`` (default: the env's topic)."""
    settings.setdefault("consume_thread_max", 4)
    consumer = make_consumer(env.bootstrap, env.overrides, env.ns, env.group, **settings)
    consumer.subscribe(topic or env.topic)
    consumer.register_message_listener(listener)
    return consumer


def test_each_partition_is_consumed_in_offset_order_one_call_at_a_time(env):
    bootstrap, _, ns, _, _ = env
    topic = env.topic + "P4"
    create_topic(bootstrap, topic, ns, partitions=4)
    for part in range(4):
        produce(bootstrap, topic, ns, [{"body": f"{part}-{i}".encode()} for i in range(40)], part)
    listener = Recording(work_s=0.005)
    consumer = _consumer(env, listener, topic, consume_message_batch_max_size=3)

    with consumer:
        wait_until(lambda: len(listener.bodies()) >= 160, what="all 160 messages")

    for part in range(4):
        assert listener.bodies(part) == [f"{part}-{i}".encode() for i in range(40)]
    assert listener.max_active_per_partition == 1
    assert listener.max_active > 1  # partitions in parallel
    assert max(len(bs) for _, bs, _, _, _ in listener.calls) == 3


def test_a_poison_message_blocks_only_its_partition_is_retried_at_the_interval_then_dead_lettered(
    env,
):
    bootstrap, _, ns, group, _ = env
    topic = env.topic + "P2"
    create_topic(bootstrap, topic, ns, partitions=2)
    produce(bootstrap, topic, ns, [{"body": b} for b in (b"poison", b"a1", b"a2")], 0)
    produce(bootstrap, topic, ns, [{"body": f"b{i}".encode()} for i in range(5)], 1)

    def behave(msgs, ctx):
        if msgs[0].body == b"poison":
            ctx.suspend_current_queue_time_millis = 300
            return SUSPEND
        return SUCCESS

    listener = Recording(behave)
    with _consumer(env, listener, topic, max_reconsume_times=3):
        wait_until(lambda: listener.bodies(0)[-2:] == [b"a1", b"a2"], what="a1, a2 after poison")

    attempts = listener.calls_of(b"poison")
    assert [rt for rt, _ in attempts] == [0, 1, 2, 3]  # 1 + max_reconsume_times deliveries
    gaps = [b[1] - a[1] for a, b in itertools.pairwise(attempts)]
    print(f"\nsuspension gaps, 300 ms asked: {[round(g * 1000) for g in gaps]} ms")
    assert all(0.29 <= g <= 0.6 for g in gaps), gaps  # 300 ms each, not the delay ladder
    assert listener.bodies(0) == [b"poison"] * 4 + [b"a1", b"a2"]
    assert listener.bodies(1) == [f"b{i}".encode() for i in range(5)]
    # partition 1 did not wait for the poison message of partition 0
    last_b = max(start for p, _, _, start, _ in listener.calls if p == 1)
    assert last_b < attempts[-1][1]
    ((headers, body),) = env.read(dlq_topic(group), 1)
    assert body == b"poison"
    assert headers[props.RECONSUME_TIME] == "4"
    # as RocketMQ 5's orderly sendMessageBack writes its dead letter
    assert headers[props.MAX_RECONSUME_TIMES] == "3" and headers[props.DELAY] == "-1"
    assert headers[props.RETRY_TOPIC] == topic
    wait_until(lambda: env.offset(topic) == 3, what="offset past the dead letter")


def test_none_and_exceptions_suspend_for_the_default_second(env):
    seen: list[float] = []

    class Flaky(MessageListenerOrderly):
        def consume_message(self, msgs, context):
            seen.append(time.monotonic())
            if len(seen) == 1:
                return None
            if len(seen) == 2:
                raise RuntimeError("boom")
            return SUCCESS

    env.produce([{"body": b"m"}])
    with _consumer(env, Flaky()):
        wait_until(lambda: len(seen) >= 3, what="three deliveries")
    gaps = [b - a for a, b in itertools.pairwise(seen)]
    print(f"\nsuspension gaps, default: {[round(g * 1000) for g in gaps]} ms")
    assert all(0.99 <= g <= 1.3 for g in gaps), gaps


def test_the_suspension_is_clamped_to_ten_milliseconds(env):
    listener = Recording(lambda msgs, ctx: _suspend_for(ctx, 0))
    env.produce([{"body": b"m"}])
    with _consumer(env, listener, max_reconsume_times=5):
        wait_until(lambda: len(listener.calls_of(b"m")) == 6, what="six deliveries")
    starts = [s for _, s in listener.calls_of(b"m")]
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    print(f"\nsuspension gaps, 0 ms asked (clamped to 10): {[round(g * 1000) for g in gaps]} ms")
    assert all(0.0095 <= g < 0.2 for g in gaps), gaps


def _suspend_for(ctx, millis: int):
    ctx.suspend_current_queue_time_millis = millis
    return SUSPEND


def test_max_reconsume_times_minus_one_is_unlimited_for_orderly_consumers(env):
    def behave(msgs, ctx):
        ctx.suspend_current_queue_time_millis = 10
        return SUSPEND if msgs[0].reconsume_times < 20 else SUCCESS

    listener = Recording(behave)
    env.produce([{"body": b"m"}, {"body": b"next"}])
    with _consumer(env, listener):  # max_reconsume_times=-1: concurrent would stop at 16
        wait_until(lambda: b"next" in listener.bodies(), what="the next message")
    assert [rt for rt, _ in listener.calls_of(b"m")] == list(range(21))
    assert env.read_all(dlq_topic(env.group), settle=0.5) == []


def test_per_key_order_holds_across_suspensions_and_a_restart(env):
    bootstrap, overrides, ns, _, _ = env
    topic = env.topic + "K"
    create_topic(bootstrap, topic, ns, partitions=3)
    keys, per_key = [f"key-{k}" for k in range(6)], 30
    with DefaultMQProducer("P", bootstrap, namespace=ns, kafka_config=overrides) as producer:
        for i in range(per_key):
            for key in keys:
                producer.send_orderly(Message(topic, body=f"{key}:{i}".encode()), key)

    done: dict[str, list[int]] = defaultdict(list)  # successful deliveries per key
    out_of_order: list[tuple[str, list[int], list[int]]] = []
    suspended: set[tuple[str, int]] = set()
    lock = threading.Lock()

    def behave(msgs, ctx):
        ctx.suspend_current_queue_time_millis = 50
        parsed = [(key, int(i)) for key, i in (m.body.decode().split(":") for m in msgs)]
        fail = any(
            i % 7 == 3 and m.reconsume_times == 0 for (_, i), m in zip(parsed, msgs, strict=True)
        )
        with lock:
            for key in {k for k, _ in parsed}:
                # a call carries, per key, exactly the next messages not yet consumed
                got = [i for k, i in parsed if k == key]
                expected = list(range(len(done[key]), len(done[key]) + len(got)))
                if got != expected:
                    out_of_order.append((key, got, expected))
            if fail:
                suspended.update(parsed)
            for key, i in parsed:
                if not fail:
                    done[key].append(i)
        return SUSPEND if fail else SUCCESS

    def total() -> int:
        with lock:
            return sum(len(v) for v in done.values())

    rounds = []
    for target in (per_key * len(keys) // 2, per_key * len(keys)):
        listener = Recording(behave, work_s=0.002)
        with _consumer(env, listener, topic, consume_message_batch_max_size=2):
            wait_until(lambda t=target: total() >= t, what=f"{target} successes")
        rounds.append(total())

    assert rounds[0] < per_key * len(keys)  # the restart came in the middle
    assert suspended >= {(k, i) for k in keys for i in range(per_key) if i % 7 == 3}
    assert out_of_order == []
    for key in keys:
        assert done[key] == list(range(per_key)), key  # in order, none lost, none twice
