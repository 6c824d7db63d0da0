"""The future ``send_async`` returns: a ``concurrent.futures.Future`` of one send.

``SendFuture`` is a real ``Future``: it is built by ``Future.__init__`` and completed
through ``Future.set_result``/``set_exception`` only, so ``concurrent.futures.wait``,
``as_completed`` and ``asyncio.wrap_future`` work on it through the standard library's
own code, and nothing here depends on ``Future``'s private attributes. What it adds:

- a send is running from the start (``set_running_or_notify_cancel``), so it cannot be
  recalled: ``cancel()`` is False;
- an outcome callback that runs once, before callbacks added with ``add_done_callback``;
- ``set_delivered``: the ``SendResult`` of an acknowledged send is built when first read,
  not on librdkafka's poll thread that reports thousands of deliveries a second.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError

from rmqcompat.message import MessageQueue
from rmqcompat.producer.send_result import SendResult, SendStatus
from rmqcompat.wire import offset_message_id

#: (msg_id, logical topic, physical topic, partition, offset, attempts) of an acknowledged send.
Delivery = tuple[str, str, str, int, int, int]
Outcome = SendResult | BaseException
OutcomeCallback = Callable[[Outcome], object]

# Stands in the Future for a delivered send whose SendResult is not built yet; never
# returned (SendFuture.result replaces it). A SendResult so the Future stays typed.
_UNBUILT = SendResult(SendStatus.SEND_OK, "")
# Builds a delivered send's SendResult once when two threads read it at the same time;
# one lock for all futures, held for a constructor call, only on a future's first read.
_build_guard = threading.Lock()


class SendFuture(Future[SendResult]):
    """The one outcome of a send: a ``SendResult`` or the ``SendError`` that ended it.

    Works wherever a ``concurrent.futures.Future`` does (``result``, ``exception``,
    ``done``, ``add_done_callback``, ``concurrent.futures.wait``/``as_completed``,
    ``asyncio.wrap_future``). A send is running from the start and cannot be recalled:
    ``cancel()`` returns False, ``cancelled()`` is always False and ``running()`` is True
    until the outcome is set. Only the producer completes it; ``set_result``,
    ``set_exception`` and ``set_delivered`` on a finished one raise ``InvalidStateError``.
    ``result(timeout)``/``exception(timeout)`` block up to ``timeout`` and then raise
    ``TimeoutError``. The outcome callback given to the constructor runs exactly once, on
    the completing thread, before the done callbacks; a callback that raises is logged
    (logger ``concurrent.futures``) and does not stop the others.
    """

    __slots__ = ("_delivery", "_on_outcome", "_sent")

    def __init__(self, on_outcome: OutcomeCallback | None = None) -> None:
        super().__init__()
        # Future's public way to say "running, cannot be cancelled any more".
        self.set_running_or_notify_cancel()
        self._delivery: Delivery | None = None
        self._sent = _UNBUILT
        self._on_outcome = on_outcome
        if on_outcome is not None:
            # Registered first, so it runs before any callback the application adds.
            super().add_done_callback(self._relay_outcome)

    def result(self, timeout: float | None = None) -> SendResult:
        result = super().result(timeout)
        if result is _UNBUILT:
            return self._built()
        return result

    def set_exception(self, exception: BaseException | None) -> None:
        if exception is None:
            raise TypeError("set_exception needs an exception")
        super().set_exception(exception)

    def set_delivered(self, delivery: Delivery) -> None:
        """Complete with an acknowledged send; its ``SendResult`` is built when first read.

        Raises:
            InvalidStateError: the future already has its outcome.
        """
        with _build_guard:  # a second delivery must not replace the first one's data
            if self._delivery is not None or self._sent is not _UNBUILT:
                raise InvalidStateError(f"{self!r} already has its outcome")
            self._delivery = delivery
        super().set_result(_UNBUILT)  # raises InvalidStateError if it failed meanwhile

    def _built(self) -> SendResult:
        with _build_guard:
            delivery = self._delivery
            if delivery is not None:
                self._sent = _send_ok(delivery)
                self._delivery = None
            return self._sent

    def _relay_outcome(self, _: Future[SendResult]) -> None:
        on_outcome, self._on_outcome = self._on_outcome, None
        if on_outcome is not None:
            error = self.exception()
            on_outcome(self.result() if error is None else error)


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
