"""Drop-in for ``rocketmq.exceptions`` (apache/rocketmq-client-python): same classes.

Each one is also an :class:`~rmqcompat.errors.RmqCompatError`; rmqcompat's own error is
chained as ``__cause__`` and gives ``retriable``. Upstream's ``ffi_check`` and its status
map belong to its C binding and have no counterpart here.
"""

from __future__ import annotations

from rmqcompat.errors import RmqCompatError


class RocketMQException(RmqCompatError):
    """Base class of the drop-in's exceptions (upstream's base class)."""


class NullPointerException(RocketMQException):
    """Upstream: the C library returned no handle. Never raised here (no C library)."""


class MallocFailed(RocketMQException):
    """Upstream: the C library ran out of memory. Never raised here."""


class ProducerException(RocketMQException):
    pass


class ProducerStartFailed(ProducerException):
    """``start()`` failed: no name server (bootstrap) address, bad settings, no broker."""


class ProducerSendSyncFailed(ProducerException):
    """``send_sync`` (or the half message of ``send_message_in_transaction``) failed; the
    message was not sent (or its outcome is unknown after a timeout)."""


class ProducerSendOnewayFailed(ProducerException):
    """``send_oneway`` refused the message before any I/O."""


class ProducerSendOrderlyFailed(ProducerException):
    """``send_orderly_with_sharding_key`` failed."""


class ProducerSendAsyncFailed(ProducerException):
    """Upstream's asynchronous send failure, with the C client's error details."""

    def __init__(self, msg: str, error: int, file: str, line: int, type: str) -> None:
        super().__init__(msg)
        self.error = error
        self.file = file
        self.line = line
        self.type = type


class ConsumerException(RocketMQException):
    pass


class PushConsumerStartFailed(ConsumerException):
    """``start()`` failed: no subscription, no name server (bootstrap) address, bad
    settings, no broker."""


def wrap(kind: type[RocketMQException], exc: BaseException) -> RocketMQException:
    """``kind`` carrying ``exc``'s text and ``retriable`` (raise it ``from exc``)."""
    wrapped = kind(str(exc))
    wrapped.retriable = bool(getattr(exc, "retriable", False))
    return wrapped
