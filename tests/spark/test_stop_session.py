"""``stop_session``: Spark stopped, then the JVM this process started waited for, and killed
when it does not exit in time (no JVM here: a stand-in process in pyspark's gateway slot)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from pyspark import SparkContext

from rmqcompat.spark.session import stop_session


class _Session:
    stopped = False

    def stop(self) -> None:
        self.stopped = True


class _Gateway:
    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc, self.closed = proc, False

    def close(self) -> None:
        self.closed = True


def _jvm(code: str, monkeypatch: pytest.MonkeyPatch) -> tuple[_Gateway, Any]:
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE)
    gateway = _Gateway(proc)
    monkeypatch.setattr(SparkContext, "_gateway", gateway)
    # put back after the test: the session's JVM of other tests in this process
    monkeypatch.setattr(SparkContext, "_jvm", SparkContext._jvm)
    return gateway, proc


def test_a_jvm_that_exits_when_its_input_closes_is_waited_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gateway, proc = _jvm("import sys; sys.stdin.read()", monkeypatch)
    session = _Session()
    assert stop_session(session, jvm_exit_s=30)  # type: ignore[arg-type]
    assert session.stopped and gateway.closed and proc.returncode == 0
    assert SparkContext._gateway is None  # the next session starts a JVM of its own


def test_a_jvm_that_does_not_exit_in_time_is_killed(monkeypatch: pytest.MonkeyPatch) -> None:
    _, proc = _jvm("import time; time.sleep(60)", monkeypatch)
    assert not stop_session(_Session(), jvm_exit_s=0.5)  # type: ignore[arg-type]
    assert proc.returncode is not None and proc.returncode < 0  # killed


def test_a_jvm_this_process_did_not_start_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(SparkContext, "_gateway", None)
    session = _Session()
    assert not stop_session(session)  # type: ignore[arg-type]
    assert session.stopped
