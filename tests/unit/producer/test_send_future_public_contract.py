"""SendFuture's contract under concurrency: one outcome, seen the same way by every
method and thread, callbacks exactly once, timeouts and the no-cancel rule."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import InvalidStateError
from typing import Any

import pytest

from rmqcompat.errors import FatalSendError
from rmqcompat.message import Message
from rmqcompat.producer.send_future import SendFuture

#: the ``new_future`` fixture (conftest.py): each implementation of the contract
NewFuture = Callable[..., SendFuture]

DELIVERY = ("ID1", "T", "rmq.T", 2, 41, 1)


def _error() -> FatalSendError:
    return FatalSendError("refused", Message("T", b"x"), code="_MSG_SIZE_TOO_LARGE")


def test_every_method_sees_the_same_outcome(new_future: NewFuture) -> None:
    future, failed = new_future(), new_future()
    seen: list[SendFuture] = []
    future.add_done_callback(seen.append)
    assert not future.done()
    future.set_delivered(DELIVERY)
    failed.set_exception(error := _error())
    assert future.done() and seen == [future]
    assert future.exception(timeout=0) is None
    assert failed.exception(timeout=0) is error and failed.done()
    with pytest.raises(FatalSendError):
        failed.result(timeout=0)
    assert future.result(timeout=0).msg_id == "ID1"


def test_wait_times_out_then_wakes_every_waiter(new_future: NewFuture) -> None:
    future = new_future()
    with pytest.raises(TimeoutError):
        future.exception(timeout=0.01)
    with pytest.raises(TimeoutError):
        future.result(timeout=0.01)
    woken: list[object] = []
    waiters = [
        threading.Thread(target=lambda: woken.append(future.exception(timeout=5))) for _ in range(3)
    ]
    for w in waiters:
        w.start()
    threading.Timer(0.02, future.set_exception, args=(_error(),)).start()
    for w in waiters:
        w.join(5)
    assert len(woken) == 3 and all(isinstance(e, FatalSendError) for e in woken)


def test_concurrent_readers_get_the_same_send_result_object(new_future: NewFuture) -> None:
    for _ in range(50):
        future = new_future()
        future.set_delivered(DELIVERY)
        results: list[object] = []
        readers = [_reader(future, results) for _ in range(4)]
        for r in readers:
            r.start()
        for r in readers:
            r.join(5)
        assert len(results) == 4 and all(r is results[0] for r in results)


def _reader(future: SendFuture, results: list[object]) -> threading.Thread:
    return threading.Thread(target=lambda: results.append(future.result()))


def test_callbacks_run_exactly_once_when_outcomes_and_callbacks_race(new_future: NewFuture) -> None:
    for _ in range(50):
        outcomes: list[object] = []
        done: list[object] = []
        future = new_future(on_outcome=outcomes.append)
        refused: list[BaseException] = []

        threads = [
            threading.Thread(target=_complete, args=(refused, future.set_delivered, DELIVERY)),
            threading.Thread(target=future.add_done_callback, args=(done.append,)),
            threading.Thread(target=_complete, args=(refused, future.set_exception, _error())),
            threading.Thread(target=future.add_done_callback, args=(done.append,)),
            threading.Thread(target=_complete, args=(refused, future.set_delivered, DELIVERY)),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(5)
        assert len(refused) == 2 and len(outcomes) == 1 and done == [future, future]
        error = future.exception()
        assert outcomes == [error if error is not None else future.result()]


def test_cannot_be_cancelled_before_or_after_its_outcome(new_future: NewFuture) -> None:
    future = new_future()
    assert future.running() and future.cancel() is False and not future.cancelled()
    future.set_delivered(DELIVERY)
    assert not future.running() and future.cancel() is False and not future.cancelled()
    assert future.result().msg_id == "ID1"


def test_set_exception_needs_an_exception(new_future: NewFuture) -> None:
    with pytest.raises(TypeError):
        new_future().set_exception("boom")  # type: ignore[arg-type]


def _complete(refused: list[BaseException], setter: Callable[[Any], None], arg: object) -> None:
    try:
        setter(arg)
    except InvalidStateError as exc:
        refused.append(exc)
