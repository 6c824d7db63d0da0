"""Logical RocketMQ topic names <-> legal Apache Kafka topic names.

RocketMQ names match ``^[%|a-zA-Z0-9_-]+$``; Apache Kafka allows only ``[a-zA-Z0-9._-]``
(at most 249 characters, never ``.`` or ``..``). Since ``.`` never occurs in a RocketMQ
name, it is free to act as separator and escape character here:

===========================  =========================================
logical (RocketMQ)           physical (Kafka), before the namespace
===========================  =========================================
``T`` (no ``%`` or ``|``)    ``T``
``%RETRY%G``                 ``rmq.retry.<esc G>``
``%DLQ%G``                   ``rmq.dlq.<esc G>``
``%ATTEMPT%G``               ``rmq.attempt.<esc G>`` (SimpleConsumer attempts handed out)
``%SCHEDULE%10s``            ``rmq.delay.10s`` (one topic per delay level)
``RMQ_SYS_TRACE_TOPIC``      ``rmq.trace``
``RMQ_SYS_QUARANTINE_TOPIC`` ``rmq.quarantine``
``RMQ_SYS_REPLAY_LOG``       ``rmq.replay-log`` (the dead-letter replay ledger)
``RMQ_SYS_RECALL_TOPIC``     ``rmq.recall`` (recalled timer messages)
``RMQ_SYS_TRANS_HALF_TOPIC``  ``rmq.trans-half`` (transactional half messages)
``RMQ_SYS_TRANS_OP_HALF_TOPIC`` ``rmq.trans-op`` (their commit/rollback/check records)
``TRANS_CHECK_MAX_TIME_TOPIC`` ``rmq.trans-check-max`` (halves undecided after check_max)
any other name with ``%|``   ``rmq.x.<esc name>``
===========================  =========================================

``<esc s>`` writes ``%`` as ``.25`` and ``|`` as ``.7c``. A namespace ``NS`` (letters,
digits, ``_`` and ``-``; not ``rmq``) is prepended as ``NS.`` to every physical name,
business topics included. The mapping is injective and :func:`from_kafka_topic` inverts it.

Apache Kafka also refuses a topic whose name equals an existing one once every ``.`` is
read as ``_`` (``ns.T`` and ``ns_T``). No scheme over these alphabets can avoid that for
every pair of names, so provisioning checks it (:func:`collision_key`) on every broker.
"""

from __future__ import annotations

import re
from functools import lru_cache

from rmqcompat.errors import InvalidNameError

RETRY_PREFIX = "%RETRY%"
DLQ_PREFIX = "%DLQ%"
#: A SimpleConsumer group's attempt log: which offsets its members hold, at which attempt.
ATTEMPT_PREFIX = "%ATTEMPT%"
SCHEDULE_PREFIX = "%SCHEDULE%"
TRACE_TOPIC = "RMQ_SYS_TRACE_TOPIC"
QUARANTINE_TOPIC = "RMQ_SYS_QUARANTINE_TOPIC"
REPLAY_LOG_TOPIC = "RMQ_SYS_REPLAY_LOG"
#: Recalls of timer messages (``Producer.recall_message``), read by every delay forwarder.
RECALL_TOPIC = "RMQ_SYS_RECALL_TOPIC"
#: RocketMQ's topics of transactional messages: half (prepared) messages and op records.
TRANS_HALF_TOPIC = "RMQ_SYS_TRANS_HALF_TOPIC"
TRANS_OP_HALF_TOPIC = "RMQ_SYS_TRANS_OP_HALF_TOPIC"
#: Where RocketMQ keeps a copy of a half message discarded after ``check_max`` checks.
TRANS_CHECK_MAX_TIME_TOPIC = "TRANS_CHECK_MAX_TIME_TOPIC"

RESERVED = "rmq"
KAFKA_MAX_LENGTH = 249
TOPIC_MAX_LENGTH = 127
GROUP_MAX_LENGTH = 255
#: ``%RETRY%<group>`` is a topic (at most 127 characters), so a consumer group that gets
#: a retry and a DLQ topic has at most 120, as in RocketMQ.
CONSUMER_GROUP_MAX_LENGTH = TOPIC_MAX_LENGTH - len(RETRY_PREFIX)
NAMESPACE_MAX_LENGTH = 64

_ROCKETMQ_NAME = re.compile(r"[%|a-zA-Z0-9_-]+")
_PLAIN_NAME = re.compile(r"[a-zA-Z0-9_-]+")
_KAFKA_NAME = re.compile(r"[a-zA-Z0-9._-]+")
_DURATION = re.compile(r"[1-9][0-9]*(ms|s|m|h|d)")
_ESCAPES = {"%": ".25", "|": ".7c"}
_UNESCAPES = {value: key for key, value in _ESCAPES.items()}
_FIXED = {
    TRACE_TOPIC: "trace",
    QUARANTINE_TOPIC: "quarantine",
    REPLAY_LOG_TOPIC: "replay-log",
    RECALL_TOPIC: "recall",
    TRANS_HALF_TOPIC: "trans-half",
    TRANS_OP_HALF_TOPIC: "trans-op",
    TRANS_CHECK_MAX_TIME_TOPIC: "trans-check-max",
}
_PREFIXED = {RETRY_PREFIX: "retry", DLQ_PREFIX: "dlq", ATTEMPT_PREFIX: "attempt"}


def _check_rocketmq_name(kind: str, name: str, max_length: int) -> None:
    if not name:
        raise InvalidNameError(f"{kind} name must not be empty")
    if len(name) > max_length:
        raise InvalidNameError(
            f"{kind} name {name!r} is {len(name)} characters; RocketMQ allows at most {max_length}"
        )
    if not _ROCKETMQ_NAME.fullmatch(name):
        raise InvalidNameError(
            f"{kind} name {name!r} has characters outside RocketMQ's ^[%|a-zA-Z0-9_-]+$"
        )


@lru_cache(maxsize=4096)
def validate_topic(topic: str) -> str:
    """Return ``topic`` if it is a legal logical (RocketMQ) topic name, else raise.

    Cached (only names found legal; a refused one raises every time), like every name
    rule a message's path meets (:func:`validate_consumer_group`, :func:`to_kafka_topic`):
    a send-back or a forwarder hop checks the same few names for every message.
    """
    _check_rocketmq_name("topic", topic, TOPIC_MAX_LENGTH)
    return topic


def validate_group(group: str) -> str:
    """Return ``group`` if it is a legal RocketMQ consumer/producer group name, else raise."""
    _check_rocketmq_name("group", group, GROUP_MAX_LENGTH)
    return group


@lru_cache(maxsize=4096)
def validate_consumer_group(group: str) -> str:
    """Return ``group`` if it is a legal consumer group: one whose ``%RETRY%<group>`` (and
    ``%DLQ%<group>``) is a legal topic name. The one rule for consumers and provisioning.
    """
    validate_group(group)
    if len(group) > CONSUMER_GROUP_MAX_LENGTH:
        raise InvalidNameError(
            f"consumer group {group[:20]}... has {len(group)} characters; at most "
            f"{CONSUMER_GROUP_MAX_LENGTH} are allowed, because its retry topic "
            f"{RETRY_PREFIX}<group> must be a legal topic name (<= {TOPIC_MAX_LENGTH})"
        )
    return group


def validate_namespace(namespace: str) -> str:
    """Return ``namespace`` if legal ("" means none), else raise :class:`InvalidNameError`."""
    if namespace == "":
        return namespace
    if len(namespace) > NAMESPACE_MAX_LENGTH or not _PLAIN_NAME.fullmatch(namespace):
        raise InvalidNameError(
            f"namespace {namespace!r} must be 1-{NAMESPACE_MAX_LENGTH} of [a-zA-Z0-9_-]"
        )
    if namespace == RESERVED:
        raise InvalidNameError(f"namespace {RESERVED!r} is reserved for rmqcompat's own topics")
    return namespace


def retry_topic(group: str) -> str:
    """The logical retry topic of a consumer group: ``%RETRY%<group>``."""
    return RETRY_PREFIX + validate_consumer_group(group)


def dlq_topic(group: str) -> str:
    """The logical dead-letter topic of a consumer group: ``%DLQ%<group>``."""
    return DLQ_PREFIX + validate_consumer_group(group)


def attempt_topic(group: str) -> str:
    """The logical attempt log of a SimpleConsumer group: ``%ATTEMPT%<group>``."""
    return ATTEMPT_PREFIX + validate_consumer_group(group)


def delay_topic(duration: str) -> str:
    """The logical topic of the delay level whose canonical duration is ``duration``."""
    if not _DURATION.fullmatch(duration):
        raise InvalidNameError(f"delay duration {duration!r} is not canonical (e.g. 10s, 100ms)")
    return SCHEDULE_PREFIX + duration


def kafka_group_id(group: str, namespace: str) -> str:
    """The Kafka consumer group of RocketMQ group ``group``: RocketMQ wraps a group in its
    namespace as ``NS%GROUP``, and Kafka group ids allow it."""
    return f"{namespace}%{group}" if namespace else group


def is_internal(logical: str) -> bool:
    """Whether ``logical`` names a topic rmqcompat owns (retry, DLQ, delay level or a
    system topic), which is never a business topic."""
    return (
        is_retry_topic(logical)
        or is_dlq_topic(logical)
        or (logical.startswith(ATTEMPT_PREFIX) and len(logical) > len(ATTEMPT_PREFIX))
        or logical.startswith(SCHEDULE_PREFIX)
        or logical in _FIXED
    )


def is_retry_topic(logical: str) -> bool:
    return logical.startswith(RETRY_PREFIX) and len(logical) > len(RETRY_PREFIX)


def is_dlq_topic(logical: str) -> bool:
    return logical.startswith(DLQ_PREFIX) and len(logical) > len(DLQ_PREFIX)


def collision_key(physical: str) -> str:
    """Two Kafka topics with the same key cannot coexist on Apache Kafka."""
    return physical.replace(".", "_")


def _escape(text: str) -> str:
    return "".join(_ESCAPES.get(char, char) for char in text)


def _unescape(text: str, physical: str) -> str:
    parts = text.split(".")
    out = [parts[0]]
    for part in parts[1:]:
        char = _UNESCAPES.get("." + part[:2])
        if char is None:
            raise InvalidNameError(f"Kafka topic {physical!r} has an unknown escape '.{part[:2]}'")
        out.append(char + part[2:])
    return "".join(out)


def _internal(logical: str) -> str:
    if logical in _FIXED:
        return _FIXED[logical]
    for prefix, kind in _PREFIXED.items():
        if logical.startswith(prefix) and len(logical) > len(prefix):
            return f"{kind}.{_escape(logical[len(prefix) :])}"
    duration = logical.removeprefix(SCHEDULE_PREFIX)
    if duration != logical and _DURATION.fullmatch(duration):
        return f"delay.{duration}"
    return f"x.{_escape(logical)}"


@lru_cache(maxsize=4096)
def to_kafka_topic(logical: str, namespace: str = "") -> str:
    """Map a logical RocketMQ topic name to its legal Kafka topic name (cached, see
    :func:`validate_topic`).

    Raises:
        InvalidNameError: the name (or namespace) breaks RocketMQ's rules, or the Kafka
            name would be longer than Kafka's 249 characters.
    """
    plain = bool(_PLAIN_NAME.fullmatch(logical)) and logical not in _FIXED
    # Retry and DLQ names embed a group, which RocketMQ allows to be longer than a topic.
    limit = TOPIC_MAX_LENGTH if plain else GROUP_MAX_LENGTH + len(RETRY_PREFIX)
    _check_rocketmq_name("topic", logical, limit)
    validate_namespace(namespace)
    body = logical if plain else f"{RESERVED}.{_internal(logical)}"
    physical = f"{namespace}.{body}" if namespace else body
    if len(physical) > KAFKA_MAX_LENGTH:
        raise InvalidNameError(
            f"{logical!r} maps to a Kafka topic name of {len(physical)} characters; "
            f"Kafka allows at most {KAFKA_MAX_LENGTH}"
        )
    return physical


def _parse_internal(rest: str, physical: str) -> str:
    kind, _, tail = rest.partition(".")
    for logical, fixed in _FIXED.items():
        if rest == fixed:
            return logical
    for prefix, name in _PREFIXED.items():
        if kind == name and tail:
            return prefix + _unescape(tail, physical)
    if kind == "delay" and tail:
        return SCHEDULE_PREFIX + tail
    if kind == "x" and tail:
        return _unescape(tail, physical)
    raise InvalidNameError(f"Kafka topic {physical!r} is not an rmqcompat topic name")


@lru_cache(maxsize=4096)
def from_kafka_topic(physical: str) -> tuple[str, str]:
    """Invert :func:`to_kafka_topic`: return ``(namespace, logical)``.

    Cached: consumers call it for every record, and it is pure.

    Raises:
        InvalidNameError: ``physical`` is not a name that :func:`to_kafka_topic` produces.
    """
    if not _KAFKA_NAME.fullmatch(physical) or len(physical) > KAFKA_MAX_LENGTH:
        raise InvalidNameError(f"{physical!r} is not a legal Kafka topic name")
    head, _, rest = physical.partition(".")
    namespace = ""
    if head != RESERVED and rest:
        namespace, physical_body = head, rest
    else:
        physical_body = physical
    if physical_body.startswith(RESERVED + "."):
        logical = _parse_internal(physical_body[len(RESERVED) + 1 :], physical)
    else:
        logical = physical_body
    if to_kafka_topic(logical, namespace) != physical:
        raise InvalidNameError(f"{physical!r} is not the canonical Kafka name of {logical!r}")
    return namespace, logical
