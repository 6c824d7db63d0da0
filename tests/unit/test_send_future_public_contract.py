"""SendFuture is a genuine concurrent.futures.Future: the standard library's own code sees
the same state as SendFuture's methods, callbacks run exactly once, and the timeout and
cancel rules hold. A reimplementation of Future's private protocol fails these."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError
from typing import Any

import pytest

from rmqcompat.errors import FatalSendError
from rmqcompat.message import Message
from rmqcompat.producer.send_future import SendFuture

DELIVERY = ("ID1", "T", "rmq.T", 2, 41, 1)


def _error() -> FatalSendError:
    return FatalSendError("refused", Message("T", b"x"), code="_MSG_SIZE_TOO_LARGE")


def test_future_base_methods_see_the_same_outcome() -> None:
    future, failed = SendFuture(), SendFuture()
    seen: list[Future[object]] = []
    Future.add_done_callback(future, seen.append)
    assert not Future.done(future)
    future.set_delivered(DELIVERY)
    failed.set_exception(error := _error())
    assert Future.done(future) and seen == [future]
    assert Future.exception(future, timeout=0) is None
    assert Future.exception(failed, timeout=0) is error
    with pytest.raises(FatalSendError):
        Future.result(failed, timeout=0)


def test_base_wait_times_out_then_wakes() -> None:
    future = SendFuture()
    with pytest.raises(TimeoutError):
        Future.exception(future, timeout=0.01)
    with pytest.raises(TimeoutError):
        future.exception(timeout=0.01)
    threading.Timer(0.02, future.set_exception, args=(_error(),)).start()
    assert isinstance(Future.exception(future, timeout=5), FatalSendError)


def test_callbacks_run_exactly_once_when_outcomes_race() -> None:
    for _ in range(50):
        outcomes: list[object] = []
        done: list[object] = []
        future = SendFuture(on_outcome=outcomes.append)
        future.add_done_callback(done.append)
        refused: list[BaseException] = []

        threads = [
            threading.Thread(target=_complete, args=(refused, future.set_delivered, DELIVERY)),
            threading.Thread(target=_complete, args=(refused, future.set_exception, _error())),
            threading.Thread(target=_complete, args=(refused, future.set_delivered, DELIVERY)),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(5)
        assert len(refused) == 2 and len(outcomes) == 1 and done == [future]
        error = future.exception()
        assert outcomes == [error if error is not None else future.result()]


def test_cannot_be_cancelled_before_or_after_its_outcome() -> None:
    future = SendFuture()
    assert future.running() and future.cancel() is False and not future.cancelled()
    assert Future.cancel(future) is False and not Future.cancelled(future)
    future.set_delivered(DELIVERY)
    assert not future.running() and future.cancel() is False and not future.cancelled()
    assert future.result().msg_id == "ID1"


def _complete(refused: list[BaseException], setter: Callable[[Any], None], arg: object) -> None:
    try:
        setter(arg)
    except InvalidStateError as exc:
        refused.append(exc)
