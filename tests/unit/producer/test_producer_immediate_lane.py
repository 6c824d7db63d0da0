"""The linger-free lane of synchronous sends: its settings, and the waiting callers taking
turns at serving delivery reports (a fake client: the hand-over is the subject)."""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any

from rmqcompat.message import Message
from rmqcompat.producer.immediate import SEND_AT_ONCE, ImmediateLane
from rmqcompat.producer.pending import PendingSend
from rmqcompat.producer.settings import PRODUCER_DEFAULTS


class ReportingClient:
    """Delivers each produced record's report to whichever thread polls next, several at
    once where they queued up (as librdkafka hands over a batch's reports together)."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings = settings
        self.reports: deque[PendingSend] = deque()
        self.arrived = threading.Condition()
        self.polls_by_thread: dict[str, int] = {}

    def produce(self, pending: PendingSend) -> None:
        with self.arrived:
            self.reports.append(pending)
            self.arrived.notify()

    def poll(self, timeout: float) -> int:
        name = threading.current_thread().name
        self.polls_by_thread[name] = self.polls_by_thread.get(name, 0) + 1
        with self.arrived:
            if not self.reports:
                self.arrived.wait(timeout)
            served = list(self.reports)
            self.reports.clear()
        for pending in served:
            pending.set_stored(0, 0)
        return len(served)


def pending_send(deadline_s: float = 5.0) -> PendingSend:
    return PendingSend(
        "t", b"b", None, {}, "ID", "T", Message("T", b"b"), 1, time.monotonic() + deadline_s
    )


def test_the_lane_sends_without_linger_whatever_the_producer_lingers():
    lane = ImmediateLane({**PRODUCER_DEFAULTS, "linger.ms": 50}, new_client=ReportingClient)
    assert lane.client().settings["linger.ms"] == SEND_AT_ONCE["linger.ms"] == 0
    assert lane.client().settings["enable.idempotence"] is True


def test_a_waiting_caller_serves_its_own_report():
    lane = ImmediateLane({}, new_client=ReportingClient)
    pending = pending_send()
    lane.client().produce(pending)
    lane.wait(pending)
    assert pending.done()
    assert list(lane.client().polls_by_thread) == [threading.current_thread().name]


def test_when_the_leader_leaves_with_its_outcome_another_caller_serves_the_rest():
    # The leader's report comes first; the others' come after it left, one at a time:
    # only a hand-over to a waiting caller gets them served before their deadline.
    lane = ImmediateLane({}, new_client=ReportingClient)
    client = lane.client()
    sends = {f"c{i}": pending_send() for i in range(16)}
    returned: list[str] = []

    def caller(name: str) -> None:
        lane.wait(sends[name])
        returned.append(name)

    threads = [threading.Thread(target=caller, args=(name,), name=name) for name in sends]
    for thread in threads:
        thread.start()
    while not client.polls_by_thread:
        time.sleep(0.001)
    [leader] = client.polls_by_thread
    client.produce(sends[leader])
    for name, pending in sends.items():
        if name != leader:
            time.sleep(0.002)
            client.produce(pending)
    for thread in threads:
        thread.join(timeout=10)
    assert not any(thread.is_alive() for thread in threads)
    assert sorted(returned) == sorted(sends)
    assert all(pending.done() for pending in sends.values())
    assert set(client.polls_by_thread) - {leader}  # another caller took over


def test_a_caller_whose_send_never_reports_returns_at_its_deadline_without_an_outcome():
    lane = ImmediateLane({}, new_client=ReportingClient)
    pending = pending_send(deadline_s=0.05)
    lane.wait(pending)
    assert not pending.done()  # the pipeline then settles it as timed out


def test_the_poll_thread_serves_reports_nobody_waits_for_only_while_no_caller_leads():
    lane = ImmediateLane({}, new_client=ReportingClient)
    lane.serve_idle()  # no client yet: nothing to do, nothing created
    assert lane.started is None
    orphan = pending_send()
    lane.client().produce(orphan)
    lane.serve_idle()
    assert orphan.done()


def test_a_replaced_client_is_not_used_again():
    lane = ImmediateLane({}, new_client=ReportingClient)
    broken = lane.client()
    assert not lane.replace(object())  # type: ignore[arg-type]
    assert lane.replace(broken)
    assert lane.client() is not broken
