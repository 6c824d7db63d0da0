"""CONSUME trace events on a real broker: a listener that raises is traced as EXCEPTION
(not RECONSUME_LATER), and orderly consumption is traced as concurrent is."""

from __future__ import annotations

import pytest
from consumer_fixtures import consumer_env  # noqa: F401
from consumer_helpers import LATER, OK, Recorder, make_consumer, trace_events
from waiting import wait_until

from rmqcompat.consumer.listener import ConsumeOrderlyStatus, MessageListenerOrderly

pytestmark = pytest.mark.integration


def _consume_events(bootstrap: str, namespace: str, wanted: int) -> list[dict[str, object]]:
    """The first ``wanted`` CONSUME events of the namespace's trace topic."""
    consumed = lambda got: [e for e in got if e["event"] == "CONSUME"]  # noqa: E731
    return consumed(trace_events(bootstrap, namespace, lambda got: len(consumed(got)) >= wanted))


def test_a_raising_listener_is_traced_as_exception(env) -> None:
    def behave(msgs, _ctx):
        if msgs[0].body == b"boom":
            raise RuntimeError("listener bug")
        return LATER if msgs[0].body == b"later" else OK

    boom, later, ok = env.produce([{"body": b"boom"}, {"body": b"later"}, {"body": b"ok"}])
    recorder = Recorder(behave)
    with env.consumer(recorder):
        wait_until(lambda: {boom, later, ok} <= set(recorder.ids()), what="three deliveries")
    events = _consume_events(env.bootstrap, env.ns, 3)
    first = {}
    for event in events:
        first.setdefault(event["msg_id"], event["status"])
    assert first == {boom: "EXCEPTION", later: "RECONSUME_LATER", ok: "SUCCESS"}


class _Orderly(MessageListenerOrderly):
    """Raises on the first call, suspends the second, then succeeds."""

    def __init__(self) -> None:
        self.calls = 0

    def consume_message(self, msgs, context):
        self.calls += 1
        context.suspend_current_queue_time_millis = 10
        if self.calls == 1:
            raise RuntimeError("listener bug")
        if self.calls == 2:
            return ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT
        return ConsumeOrderlyStatus.SUCCESS


def test_orderly_calls_are_traced_with_each_outcome(env) -> None:
    (msg_id,) = env.produce([{"body": b"one"}])
    listener = _Orderly()
    consumer = make_consumer(env.bootstrap, env.overrides, env.ns, env.group)
    consumer.subscribe(env.topic)
    consumer.register_message_listener(listener)
    with consumer:
        wait_until(lambda: listener.calls >= 3, what="three orderly calls")
    events = _consume_events(env.bootstrap, env.ns, 3)
    assert [(e["msg_id"], e["status"], e["reconsume_times"]) for e in events[:3]] == [
        (msg_id, "EXCEPTION", 0),
        (msg_id, "RECONSUME_LATER", 1),
        (msg_id, "SUCCESS", 2),
    ]
    assert all(e["group"] == env.group and e["topic"] == env.topic for e in events)
