"""The handle ``send_async`` returns: the one outcome of one send, and its callbacks.

A ``concurrent.futures.Future`` costs a ``Condition`` (two locks) to build and a lock
round to complete, which doubled the cost of ``send_async`` (see the README's
performance section). ``SendFuture`` has the same public methods (``result``,
``exception``, ``done``, ``running``, ``cancel``, ``cancelled``,
``add_done_callback``) on a few plain slots: a send that nobody waits for never takes a
lock on the caller's side, and one module lock guards the rare slow paths (a caller
waiting before the outcome, callbacks added before it). Nothing here depends on the
standard library's private ``Future`` protocol; :meth:`SendFuture.as_future` gives a
genuine ``Future`` for ``concurrent.futures.wait``/``as_completed`` and
``asyncio.wrap_future``, built only when asked for.

The ``SendResult`` of an acknowledged send is built when first read, not on librdkafka's
poll thread that reports thousands of deliveries a second.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError
from typing import Any

from rmqcompat.message import MessageQueue
from rmqcompat.producer.send_result import SendResult, SendStatus
from rmqcompat.wire import offset_message_id

#: (msg_id, logical topic, physical topic, partition, offset, attempts) of an acknowledged send.
Delivery = tuple[str, str, str, int, int, int]
Outcome = SendResult | BaseException
OutcomeCallback = Callable[[Outcome], object]
DoneCallback = Callable[["SendFuture"], object]

_log = logging.getLogger("rmqcompat.producer")

# Guards every SendFuture's slow paths: completing (against a waiter or a callback being
# added), waiting before the outcome, adding a callback and building a delivered send's
# SendResult. Held for a few attribute reads and writes only, never while a callback runs.
_lock = threading.Lock()


class SendFuture:
    """The one outcome of a send: a ``SendResult`` or the ``SendError`` that ended it.

    A send is running from the start and cannot be recalled: ``cancel()`` returns False,
    ``cancelled()`` is always False and ``running()`` is True until the outcome is set.
    Only the producer completes it; a second ``set_result``/``set_exception``/
    ``set_delivered`` raises ``InvalidStateError``. ``result(timeout)``/
    ``exception(timeout)`` block up to ``timeout`` and then raise ``TimeoutError``.

    The outcome callback given to the constructor runs exactly once, on the completing
    thread, before the done callbacks (each called with this future, in the order
    added; added after the outcome: called at once). A callback that raises is logged
    and does not stop the others.
    """

    __slots__ = ("_callbacks", "_delivery", "_done", "_error", "_on_outcome", "_sent", "_wake")

    def __init__(self, on_outcome: OutcomeCallback | None = None) -> None:
        self._done = False
        self._sent: SendResult | None = None
        self._delivery: Delivery | None = None
        self._error: BaseException | None = None
        self._on_outcome = on_outcome
        self._callbacks: list[DoneCallback] | None = None
        self._wake: threading.Event | None = None  # made by the first caller that waits

    def __repr__(self) -> str:
        if not self._done:
            return f"<SendFuture running at {id(self):#x}>"
        outcome = "failed" if self._error is not None else "delivered"
        return f"<SendFuture {outcome} at {id(self):#x}>"

    # -- the caller's side ----------------------------------------------------------------

    def done(self) -> bool:
        return self._done

    def running(self) -> bool:
        return not self._done

    def cancel(self) -> bool:
        """A send cannot be recalled: always False."""
        return False

    def cancelled(self) -> bool:
        return False

    def result(self, timeout: float | None = None) -> SendResult:
        """The ``SendResult``; raises the send's ``SendError``, or ``TimeoutError`` when
        no outcome came within ``timeout`` seconds (None: wait for it)."""
        if not self._done:
            self._wait(timeout)
        if self._error is not None:
            raise self._error
        sent = self._sent
        return sent if sent is not None else self._built()

    def exception(self, timeout: float | None = None) -> BaseException | None:
        """The ``SendError`` that ended the send, or None; ``TimeoutError`` as :meth:`result`."""
        if not self._done:
            self._wait(timeout)
        return self._error

    def add_done_callback(self, fn: DoneCallback) -> None:
        """Call ``fn(self)`` once the outcome is set (at once if it is)."""
        with _lock:
            if not self._done:
                if self._callbacks is None:
                    self._callbacks = []
                self._callbacks.append(fn)
                return
        _call(fn, self)

    def as_future(self) -> Future[SendResult]:
        """A ``concurrent.futures.Future`` that gets this send's outcome, for
        ``concurrent.futures.wait``/``as_completed`` and ``asyncio.wrap_future``; a new one
        per call (each costs what a ``Future`` costs, so only the sends that need one pay)."""
        return future_of(self)

    def _wait(self, timeout: float | None) -> None:
        with _lock:
            if self._done:
                return
            wake = self._wake
            if wake is None:
                wake = self._wake = threading.Event()
        if not wake.wait(timeout):
            raise TimeoutError(f"no outcome of the send within {timeout} s")

    def _built(self) -> SendResult:
        with _lock:  # two readers at once build it once: result() is the same object
            if self._sent is None:
                self._sent = self._acknowledged()
                self._delivery = None
            return self._sent

    def _acknowledged(self) -> SendResult:
        """The ``SendResult`` of a delivered send, from what ``set_delivered`` stored."""
        assert self._delivery is not None  # done without an error: delivered
        return send_ok(*self._delivery)

    # -- the producer's side --------------------------------------------------------------

    def set_delivered(self, delivery: Delivery) -> None:
        """Complete with an acknowledged send; its ``SendResult`` is built when first read.

        Raises:
            InvalidStateError: the future already has its outcome.
        """
        self._complete(None, delivery, None)

    def set_result(self, result: SendResult) -> None:
        """Complete with ``result`` (e.g. a send that was spooled). Raises InvalidStateError."""
        self._complete(result, None, None)

    def set_exception(self, exception: BaseException) -> None:
        """Complete with the error that ended the send. Raises InvalidStateError."""
        if not isinstance(exception, BaseException):
            raise TypeError("set_exception needs an exception")
        self._complete(None, None, exception)

    def _complete(
        self, sent: SendResult | None, delivery: Delivery | None, error: BaseException | None
    ) -> None:
        with _lock:
            if self._done:
                raise InvalidStateError(f"{self!r} already has its outcome")
            self._sent, self._delivery, self._error = sent, delivery, error
            self._done = True
            wake, callbacks, on_outcome = self._wake, self._callbacks, self._on_outcome
            self._callbacks = self._on_outcome = None
        if wake is not None:
            wake.set()
        if on_outcome is not None:
            _call(on_outcome, error if error is not None else self.result())
        if callbacks is not None:
            for fn in callbacks:
                _call(fn, self)


def future_of(send: SendFuture) -> Future[SendResult]:
    """A new ``concurrent.futures.Future`` that gets ``send``'s outcome (``as_future``)."""
    future: Future[SendResult] = Future()
    future.set_running_or_notify_cancel()

    def relay(done: SendFuture) -> None:
        error = done.exception()
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(done.result())

    send.add_done_callback(relay)
    return future


def _call(fn: Callable[[Any], object], arg: object) -> None:
    try:
        fn(arg)
    except Exception:
        _log.exception("exception calling callback for %r", arg)


def send_ok(
    msg_id: str, logical: str, physical: str, partition: int, offset: int, attempts: int
) -> SendResult:
    """The ``SendResult`` of a send the broker stored at ``partition``/``offset``."""
    return SendResult(
        SendStatus.SEND_OK,
        msg_id,
        offset_message_id(physical, partition, offset),
        MessageQueue(logical, partition),
        offset,
        attempts=attempts,
    )
