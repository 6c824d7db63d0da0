"""One exception hierarchy for rmqcompat.

Subclasses are split by what the caller should do next; ``retriable`` says whether
trying the same operation again may succeed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rmqcompat.message import Message


class RmqCompatError(Exception):
    """Base class of every error raised by rmqcompat."""

    retriable: bool = False


class ConfigError(RmqCompatError, ValueError):
    """A setting is invalid; raised before any I/O."""


class InvalidNameError(RmqCompatError, ValueError):
    """A topic, group or namespace name breaks a naming rule (the message names the rule)."""


class MessageTooLargeError(RmqCompatError, ValueError):
    """A message body is larger than the configured maximum; nothing was sent."""


class InvalidMessageError(RmqCompatError, TypeError, ValueError):
    """A ``Message`` field has the wrong type or an illegal value (the message names the
    field); raised when the message is built or sent, before any I/O."""


class BrokerUnreachableError(RmqCompatError):
    """``start()`` found no broker answering within its bound; nothing was created.

    Starting again later may succeed.
    """

    retriable = True


class AuditError(RmqCompatError):
    """A Spark audit job failed (the message is Spark's own reason, in one line)."""


class MalformedHeaderError(RmqCompatError, ValueError):
    """A Kafka header cannot be decoded as a RocketMQ property."""


class ListenerKindError(ConfigError):
    """A listener of one consume mode answered with the other mode's status (a
    ``ConsumeOrderlyStatus`` from a concurrent listener, or the reverse): registering a
    :class:`~rmqcompat.consumer.listener.MessageListenerOrderly` is what makes a consumer
    orderly. Raised at registration when the listener's annotations say so, else on its
    first answer, which stops the consumer with nothing of that batch committed."""


class ClientStateError(RmqCompatError):
    """A client was used before ``start()`` or after ``shutdown()``."""


class SendError(RmqCompatError):
    """A send failed for good; the message is handed back untouched.

    Attributes:
        message: the message that was not sent, ready to be sent again.
        code: the Kafka error name (``KafkaError.name()``) of the last attempt, if any.
        attempts: how many produce attempts were made.
    """

    def __init__(
        self, reason: str, message: Message, code: str | None = None, attempts: int = 0
    ) -> None:
        super().__init__(f"{reason} (topic={message.topic}, attempts={attempts}, code={code})")
        self.message = message
        self.code = code
        self.attempts = attempts


class RetriableSendError(SendError):
    """The broker was busy, throttling, unreachable or timed out and retries ran out.

    Sending again later may succeed (or enable the durable spool to have it done for you).
    """

    retriable = True


class FatalSendError(SendError):
    """The broker refused the message for a reason that retrying will not fix."""


class TopologyError(RmqCompatError):
    """Provisioning or verifying the topic topology failed."""
