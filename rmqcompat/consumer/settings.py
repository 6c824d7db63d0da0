"""Push-consumer settings with RocketMQ's defaults, validated before any I/O."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from rmqcompat.config import ClientConfig
from rmqcompat.consumer.listener import (
    DEFAULT_SUSPEND_CURRENT_QUEUE_TIME_MILLIS,
    ConsumeFromWhere,
    MessageModel,
)
from rmqcompat.errors import ConfigError
from rmqcompat.retry import (
    DEFAULT_MAX_RECONSUME_TIMES,
    USE_DEFAULT_MAX,
    RetryPolicy,
    max_reconsume_times_of,
)
from rmqcompat.topics.naming import validate_consumer_group

MIB = 1024 * 1024
DEFAULT_OFFSET_STORE_DIR = Path.home() / ".rmqcompat_offsets"


def minutes(value: float | timedelta) -> float:
    """``consume_timeout`` in seconds: a number is minutes (as RocketMQ), or a timedelta."""
    if isinstance(value, timedelta):
        return value.total_seconds()
    return float(value) * 60.0


@dataclass(frozen=True)
class ConsumerSettings:
    """Everything a push consumer needs, immutable. Field names follow RocketMQ 4.x.

    ``consume_timeout`` is in minutes like RocketMQ (a float or a ``timedelta`` also works);
    ``pull_threshold_size_for_queue`` is in MiB; intervals are in seconds.
    ``send_back_timeout_s`` bounds one send-back produce (its delivery timeout);
    ``pull_batch_size`` caps the records taken from Kafka per poll; ``await_termination_s``
    is how long ``shutdown`` lets running listeners finish before it commits and closes.
    ``send_back_failure_delay_s`` is how long a message whose send-back failed waits
    before it is consumed again locally (RocketMQ: 5 s).
    ``max_reconsume_times`` of -1 means the default: 16 for concurrent consumption,
    unlimited for orderly consumption (as RocketMQ 4.x's).
    ``suspend_current_queue_time_millis``: orderly consumption's pause before a suspended
    batch is consumed again, when the listener's context leaves it at -1 (RocketMQ's
    ``suspendCurrentQueueTimeMillis``, 1000; clamped to 10..30000 ms).
    ``broadcast_rediscover_interval_s`` is how often a BROADCASTING consumer looks for
    partitions added to its topics (RocketMQ re-balances every 20 s).
    ``consume_timestamp_ms`` (CONSUME_FROM_TIMESTAMP) defaults to 30 minutes before
    ``start()``, as RocketMQ's ``consumeTimestamp``.
    ``young_queue_max_messages`` / ``young_queue_max_age_s``: a group with no stored
    offset starts at 0, whatever ``consume_from_where``, on a partition whose log start is
    0, holding at most that many records, whose first record is at most that old
    (RocketMQ's young-queue rule, :class:`~rmqcompat.consumer.positions.YoungQueue`);
    ``young_queue_max_messages=0`` switches the rule off.
    ``broker_contact_timeout_s``: :meth:`healthy` turns False after this long without a
    response from any broker (:mod:`~rmqcompat.broker_contact`).

    Raises:
        ConfigError / InvalidNameError: a setting is invalid.
    """

    group: str
    client: ClientConfig
    message_model: MessageModel = MessageModel.CLUSTERING
    consume_from_where: ConsumeFromWhere = ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET
    consume_timestamp_ms: int | None = None
    consume_message_batch_max_size: int = 1
    consume_thread_max: int = 20
    max_reconsume_times: int = USE_DEFAULT_MAX
    consume_timeout: float | timedelta = 15
    pull_threshold_for_queue: int = 1000
    pull_threshold_size_for_queue: float = 100
    consume_concurrently_max_span: int = 2000
    persist_consumer_offset_interval: float = 5.0
    dead_letter: bool = True
    offset_store_dir: Path | str | None = None
    send_back_timeout_s: float = 30.0
    send_back_failure_delay_s: float = 5.0
    pull_batch_size: int = 500
    await_termination_s: float = 10.0
    broadcast_rediscover_interval_s: float = 20.0
    young_queue_max_messages: int = 10_000
    young_queue_max_age_s: float = 300.0
    broker_contact_timeout_s: float = 30.0
    suspend_current_queue_time_millis: int = DEFAULT_SUSPEND_CURRENT_QUEUE_TIME_MILLIS

    def __post_init__(self) -> None:
        validate_consumer_group(self.group)
        _check(
            1 <= self.consume_message_batch_max_size <= 1024,
            "consume_message_batch_max_size",
            "1..1024",
        )
        _check(1 <= self.consume_thread_max <= 1000, "consume_thread_max", "1..1000")
        _check(
            self.max_reconsume_times == USE_DEFAULT_MAX or 0 <= self.max_reconsume_times <= 1000,
            "max_reconsume_times",
            f"0..1000 or {USE_DEFAULT_MAX} (the default, {DEFAULT_MAX_RECONSUME_TIMES})",
        )
        _check(self.consume_timeout_s > 0, "consume_timeout", "> 0")
        _check(1 <= self.pull_threshold_for_queue <= 65535, "pull_threshold_for_queue", "1..65535")
        _check(
            0 < self.pull_threshold_size_for_queue <= 1024,
            "pull_threshold_size_for_queue",
            "(0, 1024] MiB",
        )
        _check(
            1 <= self.consume_concurrently_max_span <= 65535,
            "consume_concurrently_max_span",
            "1..65535",
        )
        _check(self.persist_consumer_offset_interval > 0, "persist_consumer_offset_interval", "> 0")
        _check(self.send_back_timeout_s > 0, "send_back_timeout_s", "> 0")
        _check(self.send_back_failure_delay_s >= 0, "send_back_failure_delay_s", ">= 0")
        _check(self.await_termination_s >= 0, "await_termination_s", ">= 0")
        _check(self.broadcast_rediscover_interval_s > 0, "broadcast_rediscover_interval_s", "> 0")
        _check(1 <= self.pull_batch_size <= 100_000, "pull_batch_size", "1..100000")
        _check(self.young_queue_max_messages >= 0, "young_queue_max_messages", ">= 0")
        _check(self.young_queue_max_age_s >= 0, "young_queue_max_age_s", ">= 0")
        _check(self.broker_contact_timeout_s > 0, "broker_contact_timeout_s", "> 0")
        _check(
            self.suspend_current_queue_time_millis >= 0,
            "suspend_current_queue_time_millis",
            ">= 0 (clamped to 10..30000 ms when used)",
        )

    @property
    def consume_timeout_s(self) -> float:
        return minutes(self.consume_timeout)

    @property
    def threshold_size_bytes(self) -> int:
        return int(self.pull_threshold_size_for_queue * MIB)

    @property
    def broadcasting(self) -> bool:
        return self.message_model is MessageModel.BROADCASTING

    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(
            self.group,
            self.client.levels,
            max_reconsume_times_of(self.max_reconsume_times),
            self.dead_letter,
            broadcasting=self.broadcasting,
        )

    def offset_file(self) -> Path:
        """Where a broadcasting consumer keeps its offsets (one file per namespace + group)."""
        base = Path(self.offset_store_dir or DEFAULT_OFFSET_STORE_DIR)
        return base / (self.client.namespace or "_") / self.group / "offsets.json"


def _check(ok: bool, name: str, rule: str) -> None:
    if not ok:
        raise ConfigError(f"{name} must be {rule}")
