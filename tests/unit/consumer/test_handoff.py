"""The hand-off between the poll thread and the listener threads (both consume modes)."""

from __future__ import annotations

import logging
import threading
import time

import pytest
from waiting import collect_finished

from rmqcompat.consumer.handoff import HandOff, Wakeups
from rmqcompat.core import CORE


def test_every_job_runs_once_and_only_reported_ones_come_back():
    ran: list[int] = []
    lock = threading.Lock()

    def run(job: int) -> bool:
        with lock:
            ran.append(job)
        return job % 2 == 0  # odd jobs did not run (e.g. cancelled): not reported

    handoff = HandOff(run, "test", 3)
    try:
        handoff.submit(range(100))
        done = collect_finished(handoff, 50)
        time.sleep(0.05)
        done += handoff.results()
    finally:
        handoff.shutdown()
    assert sorted(ran) == list(range(100))
    assert sorted(done) == list(range(0, 100, 2))


def test_withdrawn_jobs_never_run():
    release = threading.Event()
    ran: list[int] = []

    def run(job: int) -> bool:
        release.wait(5)
        ran.append(job)
        return True

    handoff = HandOff(run, "test", 1)
    try:
        handoff.submit([0])
        deadline = time.monotonic() + 5
        while handoff.backlog() and time.monotonic() < deadline:
            time.sleep(0.01)  # the worker took job 0 and waits in it
        handoff.submit([1, 2])
        assert handoff.withdraw() == [1, 2]
        release.set()
        assert collect_finished(handoff, 1) == [0]
    finally:
        handoff.shutdown()
    time.sleep(0.05)
    assert ran == [0]


def test_a_job_that_raises_is_logged_reported_and_the_worker_goes_on(
    caplog: pytest.LogCaptureFixture,
):
    def run(job: int) -> bool:
        if job == 1:
            raise ValueError("a bug")
        return True

    handoff = HandOff(run, "test", 1)
    with caplog.at_level(logging.ERROR, logger="rmqcompat.consumer"):
        try:
            handoff.submit([0, 1, 2])
            done = collect_finished(handoff, 3)
        finally:
            handoff.shutdown()
    assert done == [0, 1, 2]
    assert "a bug" in caplog.text


def test_wait_wakes_when_the_backlog_falls_below_the_mark():
    gate = threading.Semaphore(0)

    def run(job: int) -> bool:
        gate.acquire()
        return True

    handoff = HandOff(run, "test", 1)
    try:
        handoff.submit(range(4))  # one running, three queued
        assert handoff.wait(0.05, backlog_below=3) is False
        gate.release()  # job 0 ends leaving three queued: not below the mark
        gate.release()  # job 1 ends leaving two queued
        started = time.monotonic()
        assert handoff.wait(5, backlog_below=3) is True
        assert time.monotonic() - started < 1
    finally:
        for _ in range(4):
            gate.release()
        handoff.shutdown()


def test_wakeups_wake_one_worker_per_offer_and_close_releases_all():
    wakeups = Wakeups(2)
    work: list[int] = []
    results: list[bool] = []
    threads = [threading.Thread(target=lambda: results.append(wakeups.park(work))) for _ in "ab"]
    for thread in threads:
        thread.start()
    time.sleep(0.05)  # both parked
    work.append(1)
    wakeups.offer(work)
    wakeups.offer(work)  # one woken worker is already on its way: no second wake-up
    time.sleep(0.05)
    assert results == [True]
    wakeups.close()
    for thread in threads:
        thread.join(1)
    assert sorted(results) == [False, True]


@pytest.mark.skipif(CORE is None, reason="the compiled core is not in use")
def test_a_panic_of_the_core_in_a_job_is_reported_and_the_thread_goes_on(caplog):
    """A panic raises PyO3's ``PanicException``, a ``BaseException``: a listener thread
    that let it through ended, and its job was never reported (its partition stalled)."""
    assert CORE is not None

    def run(job: int) -> bool:
        if job == 0:
            raise CORE.PanicException("a bug in the core")
        return True

    handoff = HandOff(run, "test", 1)
    try:
        with caplog.at_level(logging.ERROR, logger="rmqcompat.consumer"):
            handoff.submit([0, 1, 2])
            done = collect_finished(handoff, 3)
    finally:
        handoff.shutdown()
    assert sorted(done) == [0, 1, 2]  # the one thread ran the jobs after the panic too
    assert "running 0 failed" in caplog.text
