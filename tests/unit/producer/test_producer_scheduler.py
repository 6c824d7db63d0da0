"""The producer's background job runner: due order, and nothing dropped on stop."""

from __future__ import annotations

import threading

import pytest

from rmqcompat.core import CORE
from rmqcompat.producer.scheduler import Scheduler


def test_jobs_run_in_due_order_and_stop_runs_every_scheduled_job():
    ran: list[str] = []
    scheduler = Scheduler("test")
    scheduler.start()
    scheduler.call_later(0.2, lambda: ran.append("late"))
    scheduler.call_later(0.0, lambda: ran.append("now"))
    scheduler.call_later(0.1, lambda: ran.append("soon"))
    scheduler.stop()
    assert ran == ["now", "soon", "late"]


#: A bug's exceptions: any, and a panic of the compiled core (a ``BaseException``).
BUGS = [ValueError] + ([CORE.PanicException] if CORE is not None else [])


@pytest.mark.parametrize("bug", BUGS)
def test_a_failing_job_does_not_stop_the_others(caplog, bug: type[BaseException]):
    done = threading.Event()
    scheduler = Scheduler("test")
    scheduler.start()

    def boom() -> None:
        raise bug("boom")

    scheduler.call_later(0, boom)
    scheduler.call_later(0, done.set)
    scheduler.stop()
    assert done.is_set()
    assert "background job failed" in caplog.text
