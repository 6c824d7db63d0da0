"""RocketMQ 5's exception types (``rocketmq.v5.exception``), raised by :mod:`rmqcompat.v5`.

Apps catch these by name, so the names and the ``code`` attribute follow the 5.1.2
client: ``ClientException(message, code)`` and its subclasses, whose codes are the
proxy's status codes (40013 invalid receipt handle, 40402 topic not found, ...).
Input checks raise :class:`IllegalArgumentException` (no code), a client used outside
``startup``/``shutdown`` :class:`IllegalStateException`. rmqcompat's own errors are
translated to these in one place, :func:`translate`, with the original as ``__cause__``.
"""

from __future__ import annotations

from rmqcompat import errors

#: RocketMQ 5 status codes (``apache.rocketmq.v2.Code``) used here.
BAD_REQUEST = 40000
ILLEGAL_MESSAGE_ID = 40009
INVALID_RECEIPT_HANDLE = 40013
TOPIC_NOT_FOUND = 40402
PAYLOAD_TOO_LARGE = 41300
INTERNAL_ERROR = 50000
INTERNAL_SERVER_ERROR = 50001
UNSUPPORTED = 50100
PROXY_TIMEOUT = 50400


class ClientException(Exception):
    """Base of every 5.x client error; ``code`` is the status code or None."""

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self._code = code

    def __str__(self) -> str:
        text = super().__str__()
        return f"{self._code}, {text}" if self._code else text

    @property
    def code(self) -> int | None:
        return self._code


class BadRequestException(ClientException):
    pass


class UnauthorizedException(ClientException):
    pass


class ForbiddenException(ClientException):
    pass


class NotFoundException(ClientException):
    pass


class PayloadTooLargeException(ClientException):
    pass


class TooManyRequestsException(ClientException):
    pass


class InternalErrorException(ClientException):
    pass


class ProxyTimeoutException(ClientException):
    pass


class UnsupportedException(ClientException):
    pass


class IllegalArgumentException(ClientException):
    def __init__(self, message: str) -> None:
        super().__init__(message)


class IllegalStateException(ClientException):
    def __init__(self, message: str) -> None:
        super().__init__(message)


_MISSING_TOPIC = frozenset({"UNKNOWN_TOPIC_OR_PART", "_UNKNOWN_TOPIC"})


_BAD_INPUT = (
    errors.MessageTooLargeError,
    errors.InvalidMessageError,
    errors.InvalidNameError,
    errors.ConfigError,
)


def translate(exc: errors.RmqCompatError) -> ClientException:
    """The 5.x exception for an rmqcompat error (raise it ``from exc``)."""
    text = str(exc)
    if isinstance(exc, _BAD_INPUT):
        return IllegalArgumentException(text)
    if isinstance(exc, errors.ClientStateError):
        return IllegalStateException(text)
    if isinstance(exc, errors.FatalSendError) and exc.code in _MISSING_TOPIC:
        return NotFoundException(text, TOPIC_NOT_FOUND)
    if isinstance(exc, errors.RetriableSendError | errors.BrokerUnreachableError):
        return ProxyTimeoutException(text, PROXY_TIMEOUT)
    return InternalErrorException(text, INTERNAL_ERROR)
