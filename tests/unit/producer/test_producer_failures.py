"""The one error classification table: retriable vs fatal, and the exceptions built from it."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, KafkaException

from rmqcompat.errors import FatalSendError, RetriableSendError
from rmqcompat.message import Message
from rmqcompat.producer.failures import (
    Backoff,
    as_kafka_error,
    is_retriable,
    needs_new_client,
    send_error,
)


def code(name: str) -> int:
    return getattr(KafkaError, name)


RETRIABLE = [
    "_QUEUE_FULL",
    "_MSG_TIMED_OUT",
    "_TIMED_OUT",
    "_TRANSPORT",
    "_ALL_BROKERS_DOWN",
    "REQUEST_TIMED_OUT",
    "NETWORK_EXCEPTION",
    "BROKER_NOT_AVAILABLE",
    "LEADER_NOT_AVAILABLE",
    "NOT_LEADER_FOR_PARTITION",
    "NOT_ENOUGH_REPLICAS",
    "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
    "THROTTLING_QUOTA_EXCEEDED",
    "KAFKA_STORAGE_ERROR",
    "FENCED_LEADER_EPOCH",
]
FATAL = [
    "MSG_SIZE_TOO_LARGE",
    "INVALID_MSG_SIZE",
    "RECORD_LIST_TOO_LARGE",
    "INVALID_RECORD",
    "TOPIC_AUTHORIZATION_FAILED",
    "CLUSTER_AUTHORIZATION_FAILED",
    "UNKNOWN_TOPIC_OR_PART",
    "_UNKNOWN_TOPIC",
    "INVALID_REQUIRED_ACKS",
    "UNSUPPORTED_VERSION",
]


@pytest.mark.parametrize("name", RETRIABLE)
def test_busy_throttled_timeouts_and_leader_changes_are_retriable(name):
    assert is_retriable(KafkaError(code(name)))


@pytest.mark.parametrize("name", FATAL)
def test_refusals_and_unknown_codes_are_fatal(name):
    assert not is_retriable(KafkaError(code(name)))


def test_fatal_codes_win_over_the_retriable_flag():
    assert not is_retriable(KafkaError(KafkaError.MSG_SIZE_TOO_LARGE, retriable=True))


def test_librdkafka_retriable_flag_counts_for_codes_not_in_the_table():
    assert is_retriable(KafkaError(KafkaError.COORDINATOR_LOAD_IN_PROGRESS, retriable=True))


@pytest.mark.parametrize(
    "name",
    ["_FATAL", "PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH", "OUT_OF_ORDER_SEQUENCE_NUMBER"],
)
def test_an_unusable_client_is_replaced_and_the_record_retried(name):
    error = KafkaError(code(name))
    assert needs_new_client(error)
    assert is_retriable(error)


def test_any_fatal_client_error_needs_a_new_client_even_for_a_fatal_code():
    error = KafkaError(KafkaError.MSG_SIZE_TOO_LARGE, fatal=True)
    assert needs_new_client(error)
    assert is_retriable(error)


def test_ordinary_errors_keep_the_client():
    assert not needs_new_client(KafkaError(code("_MSG_TIMED_OUT")))


def test_buffer_error_is_queue_full_and_exceptions_are_unwrapped():
    assert as_kafka_error(BufferError("Local: Queue full")).code() == code("_QUEUE_FULL")
    inner = KafkaError(KafkaError.MSG_SIZE_TOO_LARGE)
    assert as_kafka_error(KafkaException(inner)) is inner
    assert as_kafka_error(inner) is inner
    with pytest.raises(TypeError):
        as_kafka_error(ValueError("not kafka"))


def test_send_error_hands_the_message_back_with_code_and_attempts():
    msg = Message("T", b"payload")
    retriable = send_error(KafkaError(code("_MSG_TIMED_OUT")), msg, attempts=3)
    assert isinstance(retriable, RetriableSendError)
    assert retriable.retriable
    assert retriable.message is msg
    assert (retriable.code, retriable.attempts) == ("_MSG_TIMED_OUT", 3)
    fatal = send_error(KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED), msg, attempts=1)
    assert isinstance(fatal, FatalSendError)
    assert not fatal.retriable
    assert fatal.message is msg


def test_backoff_grows_and_stays_within_its_cap():
    backoff = Backoff(initial_s=0.1, max_s=0.5)
    for attempt in range(1, 12):
        delay = backoff.delay_s(attempt)
        assert 0.0 <= delay <= 0.5
    # the exponential part alone reaches the cap; jitter only adds
    assert backoff.delay_s(1) >= 0.1
    assert backoff.delay_s(10) == 0.5
