"""The future ``send_async`` returns: a ``concurrent.futures.Future`` cheap enough per send.

A stock ``Future`` builds a ``Condition`` (with an ``RLock`` and a waiter deque) in its
constructor; with thousands of sends in flight those objects cost more than the send, most
of it in the garbage collector. ``SendFuture`` creates its condition only when a thread
actually waits, builds the ``SendResult`` only when it is read, and shares one module lock
(held for a few attribute writes) instead of a lock per send.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError
from typing import Any, cast

from rmqcompat.message import MessageQueue
from rmqcompat.producer.send_result import SendResult, SendStatus
from rmqcompat.wire import offset_message_id

# concurrent.futures' own state names: its wait() and as_completed() read ``_state``.
_RUNNING = "RUNNING"
_FINISHED = "FINISHED"

# Serialises completion against late waiters and add_done_callback (never held while
# user code runs).
_guard = threading.Lock()
# Callback failures are logged where concurrent.futures logs them.
_futures_log = logging.getLogger("concurrent.futures")

#: (msg_id, logical topic, physical topic, partition, offset, attempts) of an acknowledged send.
Delivery = tuple[str, str, str, int, int, int]
Outcome = SendResult | BaseException
OutcomeCallback = Callable[[Outcome], object]


class SendFuture(Future[SendResult]):
    """The one outcome of a send: a ``SendResult`` or the ``SendError`` that ended it.

    Works wherever a ``concurrent.futures.Future`` does (``result``, ``exception``,
    ``done``, ``add_done_callback``, ``concurrent.futures.wait``/``as_completed``,
    ``asyncio.wrap_future``). A send is running from the start and cannot be recalled:
    ``cancel()`` returns False and ``cancelled()`` is always False. Only the producer
    completes it; ``set_result``/``set_exception`` on a finished one raise
    ``InvalidStateError``.
    """

    __slots__ = ("_callbacks", "_cond", "_on_outcome", "_outcome", "_state", "_waiter_list")

    def __init__(self, on_outcome: OutcomeCallback | None = None) -> None:
        # Future.__init__ is skipped on purpose: its per-send Condition is what we avoid.
        self._state = _RUNNING
        self._outcome: Outcome | Delivery | None = None
        self._on_outcome = on_outcome
        self._callbacks: list[Callable[[Future[SendResult]], object]] | None = None
        self._cond: threading.Condition | None = None
        self._waiter_list: list[Any] | None = None

    # -- the part of Future's private protocol that wait() / as_completed() use --------
    @property
    def _condition(self) -> threading.Condition:  # type: ignore[override]
        if self._cond is None:
            with _guard:
                if self._cond is None:
                    self._waiter_list = []
                    self._cond = threading.Condition()
        return self._cond

    @property
    def _waiters(self) -> list[Any]:  # type: ignore[override]
        self._condition  # noqa: B018 - creates the list with the condition
        return cast(list[Any], self._waiter_list)

    # -- reading ------------------------------------------------------------------------
    def done(self) -> bool:
        return self._state == _FINISHED

    def running(self) -> bool:
        return self._state != _FINISHED

    def cancelled(self) -> bool:
        return False

    def cancel(self) -> bool:
        return False

    def result(self, timeout: float | None = None) -> SendResult:
        outcome = self._wait(timeout)
        if isinstance(outcome, BaseException):
            try:
                raise outcome
            finally:
                del outcome  # no frame -> traceback -> exception cycle (as Future does)
        return outcome

    def exception(self, timeout: float | None = None) -> BaseException | None:
        outcome = self._wait(timeout)
        return outcome if isinstance(outcome, BaseException) else None

    def add_done_callback(self, fn: Callable[[Future[SendResult]], object]) -> None:
        with _guard:
            if self._state != _FINISHED:
                if self._callbacks is None:
                    self._callbacks = []
                self._callbacks.append(fn)
                return
        _call(fn, self)

    def __repr__(self) -> str:
        if self._state != _FINISHED:
            return f"<SendFuture at {id(self):#x} state=running>"
        outcome = self._settled()
        kind = "raised" if isinstance(outcome, BaseException) else "returned"
        return f"<SendFuture at {id(self):#x} state=finished {kind} {type(outcome).__name__}>"

    # -- completing (producer threads) --------------------------------------------------
    def set_result(self, result: SendResult) -> None:
        self._finish(result)

    def set_exception(self, exception: BaseException | None) -> None:
        if exception is None:
            raise TypeError("set_exception needs an exception")
        self._finish(exception)

    def set_delivered(self, delivery: Delivery) -> None:
        """Complete with an acknowledged send; its ``SendResult`` is built when first read."""
        self._finish(delivery)

    def _finish(self, outcome: Outcome | Delivery) -> None:
        with _guard:
            already_done = self._state == _FINISHED
            if not already_done:
                self._outcome = outcome
                self._state = _FINISHED
                cond, callbacks, self._callbacks = self._cond, self._callbacks, None
        if already_done:  # raised outside the lock: repr() takes it too
            raise InvalidStateError(f"{self!r} already has its outcome")
        if cond is not None:
            self._wake(cond)
        on_outcome, self._on_outcome = self._on_outcome, None
        if on_outcome is not None:
            _call(on_outcome, self._settled())
        for fn in callbacks or ():
            _call(fn, self)

    def _wake(self, cond: threading.Condition) -> None:
        failed = isinstance(self._outcome, BaseException)
        with cond:
            for waiter in self._waiter_list or ():
                if failed:
                    waiter.add_exception(self)
                else:
                    waiter.add_result(self)
            cond.notify_all()

    def _wait(self, timeout: float | None) -> Outcome:
        if self._state != _FINISHED:
            cond = self._condition
            with cond:
                if self._state != _FINISHED:
                    cond.wait(timeout)
            if self._state != _FINISHED:
                raise TimeoutError()
        return self._settled()

    def _settled(self) -> Outcome:
        outcome = self._outcome
        if isinstance(outcome, tuple):
            with _guard:  # built once even when two threads read it at the same time
                outcome = self._outcome
                if isinstance(outcome, tuple):
                    outcome = self._outcome = _send_ok(outcome)
        return cast(Outcome, outcome)  # only called once finished


def _send_ok(delivery: Delivery) -> SendResult:
    msg_id, logical, physical, partition, offset, attempts = delivery
    return SendResult(
        SendStatus.SEND_OK,
        msg_id,
        offset_message_id(physical, partition, offset),
        MessageQueue(logical, partition),
        offset,
        attempts=attempts,
    )


def _call(fn: Callable[[Any], object], arg: Any) -> None:
    try:
        fn(arg)
    except Exception:
        _futures_log.exception("exception calling callback for %r", arg)
