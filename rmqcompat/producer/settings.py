"""Producer settings: validation and the librdkafka configuration built from them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rmqcompat.config import ClientConfig
from rmqcompat.errors import ConfigError
from rmqcompat.topics.naming import validate_group

#: Defaults the user's ``kafka_config`` may override. Idempotence makes librdkafka's own
#: internal retries duplicate-free; it requires ``acks=all``.
PRODUCER_DEFAULTS: Mapping[str, Any] = {
    "enable.idempotence": True,
    "acks": "all",
    "linger.ms": 5,
}

#: RocketMQ 5's ``timerMaxDelaySec`` default: a timer message at most 3 days ahead.
TIMER_MAX_DELAY_SEC = 3 * 24 * 3600


@dataclass(frozen=True)
class ProducerSettings:
    """RocketMQ's producer knobs, validated (no I/O).

    Raises:
        ConfigError / InvalidNameError: a setting is invalid.
    """

    group: str
    client: ClientConfig
    retry_times_when_send_failed: int = 2
    retry_times_when_send_async_failed: int = 2
    send_msg_timeout: int = 3000
    spool_resend_interval_s: float | None = 30.0
    timer_max_delay_sec: int = TIMER_MAX_DELAY_SEC

    def __post_init__(self) -> None:
        validate_group(self.group)
        for name in ("retry_times_when_send_failed", "retry_times_when_send_async_failed"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be >= 0, not {getattr(self, name)}")
        if self.send_msg_timeout <= 0:
            raise ConfigError(f"send_msg_timeout must be > 0 ms, not {self.send_msg_timeout}")
        interval = self.spool_resend_interval_s
        if interval is not None and interval <= 0:
            raise ConfigError(f"spool_resend_interval_s must be > 0 or None, not {interval}")
        if self.timer_max_delay_sec <= 0:
            raise ConfigError(f"timer_max_delay_sec must be > 0, not {self.timer_max_delay_sec}")

    def librdkafka(self) -> dict[str, Any]:
        """Settings for confluent-kafka: defaults < user ``kafka_config`` < derived ones.

        ``message.timeout.ms`` is always ``send_msg_timeout``: one librdkafka attempt never
        outlives the sync send's whole budget.
        """
        explicit: dict[str, Any] = {"message.timeout.ms": self.send_msg_timeout}
        settings = dict(PRODUCER_DEFAULTS)
        settings.update(self.client.librdkafka("producer", **explicit))
        return settings
