"""A conformance scenario as data: what is sent, what the listener answers per message and
attempt, the consumer's settings, and the differences we expect on purpose.

The same :class:`Scenario` runs on Apache RocketMQ and on rmqcompat: a 4.x one through
``Driver.java`` (which reads :meth:`Scenario.driver_json`) and ``rmqcompat_runner.py``, a
5.x one (``api="5.x"``: SimpleConsumer or PushConsumer, FIFO groups) through
``driver5.py`` (which reads :meth:`Scenario.driver5_json`) on both; ``conftest.RUNNERS``
picks the pair.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

#: How a history comparison shows a path one side does not have.
MISSING = "<missing>"

ReplyKind = Literal["success", "later", "exception", "null", "suspend"]
TransactionAnswer = Literal["commit", "rollback", "unknown", "exception"]


@dataclass(frozen=True)
class Reply:
    """What the listener does with a batch whose first message is at a given attempt.

    ``ack_index`` (concurrent success) and ``delay_level`` (concurrent
    ``delay_level_when_next_consume``) set the context; ``suspend_ms`` sets an orderly
    context's ``suspend_current_queue_time_millis``. On 5.x, success acks (SimpleConsumer)
    or returns ``ConsumeResult.SUCCESS`` (PushConsumer), later leaves a received message
    unacked (first changing its invisible duration to ``invisible_s`` when set) or returns
    ``ConsumeResult.FAILURE``.
    """

    kind: ReplyKind
    ack_index: int | None = None
    delay_level: int | None = None
    suspend_ms: int | None = None
    invisible_s: int | None = None


SUCCESS = Reply("success")
LATER = Reply("later")
EXCEPTION = Reply("exception")
NULL = Reply("null")
SUSPEND = Reply("suspend")


@dataclass(frozen=True)
class Send:
    """One message the producer sends; ``key`` names it in replies and in the history."""

    key: str
    tags: str = "TagA"
    body: str = "body"
    properties: Mapping[str, str] = field(default_factory=dict)
    delay_level: int = 0
    deliver_after_ms: int = 0
    message_group: str | None = None


@dataclass(frozen=True)
class Transaction:
    """The local transaction's answer for one message, then the checks' answers (the last
    repeats; none means UNKNOW every time)."""

    local: TransactionAnswer
    checks: tuple[TransactionAnswer, ...] = ()


@dataclass(frozen=True)
class Expected:
    """A difference we keep on purpose or that Kafka forces (``Scenario.expected``), or a
    deviation to fix (``Scenario.deviations``: its test is a strict xfail until the fix
    lands). ``path`` is an fnmatch pattern over the history's flattened paths
    (``k1.dlq.properties.REAL_QID``). With ``lead_s`` (low, high) it covers a time (a gap)
    only when RocketMQ's value exceeds rmqcompat's by low to high seconds: a known,
    bounded lag of one system, while a difference outside it still shows. With
    ``rocketmq_extra`` it covers only what RocketMQ has and rmqcompat lacks, and it may
    not occur at all: something RocketMQ does in a race it sometimes loses."""

    path: str
    reason: str
    lead_s: tuple[float, float] | None = None
    rocketmq_extra: bool = False

    def covers(self, path: str, rocketmq: Any, rmqcompat: Any) -> bool:
        """Whether this entry explains the difference at ``path``."""
        if not fnmatch.fnmatch(path, self.path):
            return False
        if self.rocketmq_extra:
            return rmqcompat == MISSING and rocketmq != MISSING
        if self.lead_s is None:
            return True
        if not (isinstance(rocketmq, float) and isinstance(rmqcompat, float)):
            return False
        low, high = self.lead_s
        return low <= rocketmq - rmqcompat <= high


#: How long a consumer started first is given to join before anything is sent.
CONSUMER_READY_MS = 3000
#: The quiet time counts from the first delivery, or from this long after the start when
#: none comes (a consumer slow to get its queue must not end the run early).
FIRST_DELIVERY_GRACE_MS = 15_000
#: A scenario that has not gone quiet by then has failed.
TIMEOUT_MS = 150_000


@dataclass(frozen=True)
class Scenario:
    """One scenario; ``replies`` maps a message key to its answers per attempt (the last
    repeats; a key with none succeeds). ``max_reconsume_times`` -1 is the default (16
    concurrent, unlimited orderly). ``consumer_first`` starts the consumer before sending
    (for delayed sends, whose first gap counts from the send); ``consume_from`` is the
    group's ``consume_from_where`` (FIRST or LAST offset); ``queue_age_ms`` delays the
    consumer's start after the sends (an older queue), and ``young_queue_max_age_s`` is
    rmqcompat's bound of a young queue's age (None: its default); ``create_topic`` False sends to
    a topic that does not exist; ``api`` picks the pair of runners (conftest.RUNNERS). The
    run ends once nothing happened for ``quiet_ms`` after the first delivery (longer than
    the longest gap the scenario waits), or after ``first_delivery_grace_ms`` and the
    quiet time when nothing is delivered.

    5.x only: ``consumer`` (SimpleConsumer or PushConsumer), ``invisible_s`` (a
    SimpleConsumer's receive), ``max_attempts`` (the group's on RocketMQ, the consumer's
    on rmqcompat), ``fifo`` (the group consumes in order; its messages carry
    ``Send.message_group``)."""

    name: str
    messages: tuple[Send, ...]
    replies: Mapping[str, tuple[Reply, ...]] = field(default_factory=dict)
    max_reconsume_times: int = -1
    model: Literal["CLUSTERING", "BROADCASTING"] = "CLUSTERING"
    orderly: bool = False
    subscription: str = "*"
    batch_size: int = 1
    queues: int = 1
    consumer_first: bool = False
    quiet_ms: int = 6000
    first_delivery_grace_ms: int = FIRST_DELIVERY_GRACE_MS
    api: Literal["4.x", "5.x"] = "4.x"
    consume_from: Literal["FIRST", "LAST"] = "FIRST"
    queue_age_ms: int = 0
    young_queue_max_age_s: float | None = None
    create_topic: bool = True
    transaction: Mapping[str, Transaction] | None = None
    expected: tuple[Expected, ...] = ()
    deviations: tuple[Expected, ...] = ()
    consumer: Literal["simple", "push"] = "push"
    invisible_s: int = 5
    max_attempts: int = 17
    fifo: bool = False

    def driver_json(self, topic: str, group: str) -> dict[str, Any]:
        """The scenario as ``Driver.java`` reads it."""
        return {
            "topic": topic,
            "group": group,
            "messages": [
                asdict(send) | {"properties": dict(send.properties)} for send in self.messages
            ],
            "replies": self._replies_json(),
            "max_reconsume_times": self.max_reconsume_times,
            "model": self.model,
            "orderly": self.orderly,
            "subscription": self.subscription,
            "batch_size": self.batch_size,
            "queues": self.queues,
            "consumer_first": self.consumer_first,
            "consume_from": self.consume_from,
            "queue_age_ms": self.queue_age_ms,
            "create_topic": self.create_topic,
            "consumer_ready_ms": CONSUMER_READY_MS,
            "quiet_ms": self.quiet_ms,
            "timeout_ms": TIMEOUT_MS,
            "first_delivery_grace_ms": self.first_delivery_grace_ms,
            "transaction": None
            if self.transaction is None
            else {
                k: {"local": t.local, "checks": list(t.checks)} for k, t in self.transaction.items()
            },
        }

    def driver5_json(self, topic: str, group: str) -> dict[str, Any]:
        """The scenario as ``driver5.py`` reads it."""
        return {
            "topic": topic,
            "group": group,
            "dlq_group": f"{group}-dlq-reader",
            "messages": [
                {
                    "key": send.key,
                    "tags": send.tags,
                    "body": send.body,
                    "properties": dict(send.properties),
                    "message_group": send.message_group,
                    "deliver_after_ms": send.deliver_after_ms,
                }
                for send in self.messages
            ],
            "replies": self._replies_json(),
            "consumer": self.consumer,
            "invisible_s": self.invisible_s,
            "batch_size": self.batch_size,
            "subscription": self.subscription,
            "consumer_first": self.consumer_first,
            "quiet_ms": self.quiet_ms,
            "timeout_ms": TIMEOUT_MS,
            "first_delivery_grace_ms": self.first_delivery_grace_ms,
        }

    def _replies_json(self) -> dict[str, list[dict[str, Any]]]:
        return {
            key: [{k: v for k, v in asdict(r).items() if v is not None} for r in answers]
            for key, answers in self.replies.items()
        }

    def reply(self, key: str, attempt: int) -> Reply:
        """The answer for ``key`` at ``attempt`` (0 = first delivery)."""
        answers = self.replies.get(key, ())
        return answers[min(attempt, len(answers) - 1)] if answers else SUCCESS
