"""The one place that maps confluent-kafka / librdkafka failures to rmqcompat exceptions.

Busy, throttled, queue-full, timed-out, unreachable and leader-change conditions are
retriable (RocketMQ forgot SYSTEM_BUSY until 5.3.0, seed 003; we do not). Delivery reports
rarely carry ``KafkaError.retriable()``, so the explicit table decides first.
"""

from __future__ import annotations

from dataclasses import dataclass

import tenacity
from confluent_kafka import KafkaError, KafkaException

from rmqcompat.errors import FatalSendError, RetriableSendError, SendError
from rmqcompat.message import Message


def _local(name: str) -> int:
    # librdkafka's local (client-side) codes start with "_", which private-access lint
    # rules mistake for private members; they are public API of confluent-kafka.
    code: int = getattr(KafkaError, name)
    return code


#: Trying again (after a pause) may succeed.
RETRIABLE_CODES = frozenset(
    {
        _local("_QUEUE_FULL"),
        _local("_MSG_TIMED_OUT"),
        _local("_TIMED_OUT"),
        _local("_TIMED_OUT_QUEUE"),
        _local("_TRANSPORT"),
        _local("_ALL_BROKERS_DOWN"),
        _local("_UNKNOWN_BROKER"),
        _local("_DESTROY_BROKER"),
        KafkaError.REQUEST_TIMED_OUT,
        KafkaError.NETWORK_EXCEPTION,
        KafkaError.BROKER_NOT_AVAILABLE,
        KafkaError.LEADER_NOT_AVAILABLE,
        KafkaError.NOT_LEADER_FOR_PARTITION,
        KafkaError.PREFERRED_LEADER_NOT_AVAILABLE,
        KafkaError.ELIGIBLE_LEADERS_NOT_AVAILABLE,
        KafkaError.REPLICA_NOT_AVAILABLE,
        KafkaError.FENCED_LEADER_EPOCH,
        KafkaError.UNKNOWN_LEADER_EPOCH,
        KafkaError.NOT_ENOUGH_REPLICAS,
        KafkaError.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        KafkaError.THROTTLING_QUOTA_EXCEEDED,
        KafkaError.KAFKA_STORAGE_ERROR,
    }
)

#: Refused for a reason a retry cannot fix, even if librdkafka marks it retriable.
FATAL_CODES = frozenset(
    {
        KafkaError.MSG_SIZE_TOO_LARGE,
        KafkaError.INVALID_MSG_SIZE,
        KafkaError.RECORD_LIST_TOO_LARGE,
        KafkaError.INVALID_RECORD,
        KafkaError.TOPIC_AUTHORIZATION_FAILED,
        KafkaError.CLUSTER_AUTHORIZATION_FAILED,
        KafkaError.UNKNOWN_TOPIC_OR_PART,
        _local("_UNKNOWN_TOPIC"),
        _local("_PURGE_QUEUE"),
        _local("_PURGE_INFLIGHT"),
    }
)


#: The librdkafka client itself is unusable (idempotent producer fenced or fatal): the
#: record is fine and succeeds on a new client instance.
NEW_CLIENT_CODES = frozenset(
    {
        _local("_FATAL"),
        KafkaError.PRODUCER_FENCED,
        KafkaError.INVALID_PRODUCER_EPOCH,
        KafkaError.OUT_OF_ORDER_SEQUENCE_NUMBER,
        KafkaError.UNKNOWN_PRODUCER_ID,
    }
)


def needs_new_client(error: KafkaError) -> bool:
    """True if the producer instance must be replaced before sending again."""
    return error.fatal() or error.code() in NEW_CLIENT_CODES


def is_retriable(error: KafkaError) -> bool:
    """True if sending the same record again (maybe on a new client) may succeed.

    Unknown codes are fatal.
    """
    code = error.code()
    if needs_new_client(error):
        return True
    if code in FATAL_CODES:
        return False
    return code in RETRIABLE_CODES or error.retriable()


def as_kafka_error(failure: BaseException | KafkaError) -> KafkaError:
    """Normalise what ``produce()`` raises or a delivery report carries to a KafkaError."""
    if isinstance(failure, KafkaError):
        return failure
    if isinstance(failure, KafkaException) and isinstance(failure.args[0], KafkaError):
        return failure.args[0]
    if isinstance(failure, BufferError):
        # librdkafka's local queue is full (queue.buffering.max.messages/kbytes).
        return KafkaError(_local("_QUEUE_FULL"), str(failure))
    raise TypeError(f"not a Kafka failure: {failure!r}")


def timed_out(reason: str) -> KafkaError:
    """The (retriable) error of a send whose ``send_msg_timeout`` ran out locally."""
    return KafkaError(_local("_MSG_TIMED_OUT"), reason)


def send_error(error: KafkaError, message: Message, attempts: int) -> SendError:
    """The exception that hands ``message`` back to the caller after ``attempts`` tries."""
    kind = RetriableSendError if is_retriable(error) else FatalSendError
    return kind(f"send failed: {error.str()}", message, code=error.name(), attempts=attempts)


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff with jitter between send attempts (tenacity's policy).

    Attempt n (1-based, the attempt that failed) waits about ``initial_s * 2**(n-1)``,
    capped at ``max_s``.
    """

    initial_s: float = 0.1
    max_s: float = 1.0

    def strategy(self) -> tenacity.wait.wait_base:
        return tenacity.wait_exponential_jitter(
            multiplier=self.initial_s, max=self.max_s, jitter=self.initial_s
        )

    def delay_s(self, failed_attempt: int) -> float:
        """Seconds to wait after attempt ``failed_attempt`` failed."""
        state = tenacity.RetryCallState(None, None, (), {})  # type: ignore[arg-type]
        state.attempt_number = failed_attempt
        return min(self.strategy()(state), self.max_s)
