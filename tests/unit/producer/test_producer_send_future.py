"""SendFuture: the future contract send_async relies on, and a genuine Future on demand."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, InvalidStateError, as_completed, wait

import pytest

from rmqcompat.errors import RetriableSendError
from rmqcompat.message import Message, MessageQueue
from rmqcompat.producer.send_future import SendFuture
from rmqcompat.producer.send_result import SendResult, SendStatus

#: the ``new_future`` fixture (conftest.py): each implementation of the contract
NewFuture = Callable[..., SendFuture]

DELIVERY = ("ID1", "T", "rmq.T", 2, 41, 1)


def _error() -> RetriableSendError:
    return RetriableSendError("busy", Message("T", b"x"), code="_QUEUE_FULL", attempts=3)


def test_is_a_running_future_that_cannot_be_cancelled(new_future: NewFuture) -> None:
    future = new_future()
    assert future.running() and not future.done()
    assert future.cancel() is False and not future.cancelled()


def test_delivery_builds_the_same_send_result_once(new_future: NewFuture) -> None:
    future = new_future()
    future.set_delivered(DELIVERY)
    result = future.result(timeout=0)
    assert result == SendResult(
        SendStatus.SEND_OK, "ID1", "rmq.T@2@41", MessageQueue("T", 2), 41, attempts=1
    )
    assert future.result() is result and future.exception() is None and future.done()


def test_exception_is_raised_by_result(new_future: NewFuture) -> None:
    future = new_future()
    error = _error()
    future.set_exception(error)
    assert future.exception() is error
    with pytest.raises(RetriableSendError):
        future.result()


def test_second_outcome_is_refused(new_future: NewFuture) -> None:
    future = new_future()
    future.set_delivered(DELIVERY)
    with pytest.raises(InvalidStateError):
        future.set_exception(_error())


def test_result_times_out_while_running(new_future: NewFuture) -> None:
    with pytest.raises(TimeoutError):
        new_future().result(timeout=0.01)


def test_outcome_callback_then_done_callbacks_each_run_exactly_once(new_future: NewFuture) -> None:
    calls: list[object] = []
    future = new_future(on_outcome=lambda outcome: calls.append(("outcome", outcome)))
    future.add_done_callback(lambda f: calls.append(("done", f)))
    future.set_delivered(DELIVERY)
    future.add_done_callback(lambda f: calls.append(("late", f)))  # runs at once
    assert calls == [("outcome", future.result()), ("done", future), ("late", future)]


def test_failing_callback_is_logged_and_does_not_stop_the_others(
    new_future: NewFuture,
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[SendFuture] = []
    future = new_future(on_outcome=lambda _: 1 / 0)
    future.add_done_callback(seen.append)
    future.set_exception(_error())
    assert seen == [future]
    assert "exception calling callback" in caplog.text


def test_waiting_thread_is_woken(new_future: NewFuture) -> None:
    future = new_future()
    results: list[SendResult] = []
    waiter = threading.Thread(target=lambda: results.append(future.result(timeout=5)))
    waiter.start()
    future.set_delivered(DELIVERY)
    waiter.join(5)
    assert results == [future.result()]


def test_as_future_is_a_genuine_future_for_wait_and_as_completed(new_future: NewFuture) -> None:
    sends = [new_future() for _ in range(3)]
    futures = [send.as_future() for send in sends]
    assert all(isinstance(f, Future) and f.running() for f in futures)
    timer = threading.Timer(0.05, sends[1].set_delivered, args=(DELIVERY,))
    timer.start()
    done, not_done = wait(futures, timeout=5, return_when=FIRST_COMPLETED)
    assert done == {futures[1]} and len(not_done) == 2
    sends[0].set_exception(error := _error())
    sends[2].set_delivered(DELIVERY)
    assert set(as_completed(futures, timeout=5)) == set(futures)
    assert futures[0].exception() is error
    assert futures[2].result() is sends[2].result()


def test_as_future_after_the_outcome_is_already_done(new_future: NewFuture) -> None:
    send = new_future()
    send.set_delivered(DELIVERY)
    future = send.as_future()
    assert future.done() and future.result() is send.result()
    assert future.cancel() is False  # running before it got the outcome: never cancellable


def test_as_future_works_with_asyncio_wrap_future(new_future: NewFuture) -> None:
    send = new_future()

    async def main() -> SendResult:
        asyncio.get_running_loop().call_later(0.01, send.set_delivered, DELIVERY)
        return await asyncio.wrap_future(send.as_future())

    assert asyncio.run(main()).queue_offset == 41
