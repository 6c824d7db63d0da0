"""The RocketMQ 5 PushConsumer on Apache Kafka: ack, the 5.x retry policy, DLQ, FIFO."""

from __future__ import annotations

import threading
import time
from collections import defaultdict

import pytest
from v5_helpers import GIVE_UP_S, read_dlq

from rmqcompat import properties as props
from rmqcompat.v5 import ConsumeResult, FilterExpression, MessageListener, PushConsumer
from rmqcompat.v5.exceptions import IllegalArgumentException


class Recorder(MessageListener):
    """Records (body, delivery_attempt) per call; ``answer(msg)`` decides the result."""

    def __init__(self, answer=lambda msg: ConsumeResult.SUCCESS) -> None:
        self.answer = answer
        self.calls: list[tuple[bytes, int]] = []
        self.lock = threading.Lock()

    def consume(self, message):
        with self.lock:
            self.calls.append((message.body, message.delivery_attempt))
        return self.answer(message)

    def wait_for(self, done) -> None:
        deadline = time.monotonic() + GIVE_UP_S
        while not done(list(self.calls)):
            assert time.monotonic() < deadline, self.calls
            time.sleep(0.05)


@pytest.fixture
def run(setup, started, unique_name):
    def run(listener, group=None, **kwargs) -> PushConsumer:
        group = group or unique_name("g")
        return started(PushConsumer(setup, group, listener, {"Jobs": FilterExpression()}, **kwargs))

    return run


def test_success_acks_each_message_once(send, run):
    send("Jobs", b"a", b"b")
    listener = Recorder()
    run(listener)
    listener.wait_for(lambda calls: len(calls) == 2)
    assert sorted(listener.calls) == [(b"a", 1), (b"b", 1)]


def test_failure_and_exceptions_retry_with_the_next_attempt_then_dead_letter(
    send, run, unique_name, kafka_bootstrap, namespace, client_overrides
):
    def answer(msg):
        if msg.body == b"raises":
            raise RuntimeError("boom")
        return ConsumeResult.FAILURE if msg.delivery_attempt < 2 else ConsumeResult.SUCCESS

    (raises,) = send("Jobs", b"raises")
    send("Jobs", b"once")
    group = unique_name("g")
    listener = Recorder(answer)
    run(listener, group=group, max_attempts=3)
    listener.wait_for(lambda calls: calls.count((b"raises", 3)) == 1 and (b"once", 2) in calls)
    (dead,) = read_dlq(kafka_bootstrap, namespace, group, client_overrides, 1)
    assert dead[props.ORIGIN_MESSAGE_ID] == raises
    attempts = defaultdict(list)
    for body, attempt in listener.calls:
        attempts[body].append(attempt)
    assert attempts == {b"raises": [1, 2, 3], b"once": [1, 2]}


def test_fifo_group_order_and_a_stuck_group_never_blocks_its_neighbour(send, run):
    """Both groups share the topic's single partition."""
    release = threading.Event()

    def answer(msg):
        if msg.message_group == "stuck":
            release.wait(GIVE_UP_S)
        return ConsumeResult.SUCCESS

    for i in range(5):
        send("Jobs", f"stuck-{i}".encode(), message_group="stuck")
        send("Jobs", f"free-{i}".encode(), message_group="free")
    listener = Recorder(answer)
    run(listener)
    listener.wait_for(lambda calls: sum(b.startswith(b"free") for b, _ in calls) == 5)
    stuck_seen = [b for b, _ in listener.calls if b.startswith(b"stuck")]
    assert stuck_seen == [b"stuck-0"]  # its successors wait behind it
    release.set()
    listener.wait_for(lambda calls: len(calls) == 10)
    for group in (b"stuck", b"free"):
        bodies = [b for b, _ in listener.calls if b.startswith(group)]
        assert bodies == [group + f"-{i}".encode() for i in range(5)]


def test_a_failing_fifo_message_is_retried_in_place_then_dead_lettered(
    send, run, unique_name, kafka_bootstrap, namespace, client_overrides
):
    def answer(msg):
        return ConsumeResult.FAILURE if msg.body == b"bad" else ConsumeResult.SUCCESS

    (bad,) = send("Jobs", b"bad", message_group="g1")
    send("Jobs", b"next", message_group="g1")
    group = unique_name("g")
    listener = Recorder(answer)
    run(listener, group=group, max_attempts=3)
    listener.wait_for(lambda calls: (b"next", 1) in calls)
    assert listener.calls == [(b"bad", 1), (b"bad", 2), (b"bad", 3), (b"next", 1)]
    (dead,) = read_dlq(kafka_bootstrap, namespace, group, client_overrides, 1)
    assert dead[props.ORIGIN_MESSAGE_ID] == bad


def test_bad_input_is_refused_before_any_io(setup):
    listener = Recorder()
    with pytest.raises(IllegalArgumentException, match="message_listener should not be null"):
        PushConsumer(setup, "g", None, {"Jobs": FilterExpression()})
    with pytest.raises(IllegalArgumentException, match="subscription should not be null"):
        PushConsumer(setup, "g", listener, {})
    with pytest.raises(IllegalArgumentException, match="consumption_thread_count"):
        PushConsumer(setup, "g", listener, {"Jobs": FilterExpression()}, 1024, 1, 0)
