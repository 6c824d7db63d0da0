"""RocketMQ 5's retry policy for push consumers, on the delay table.

A RocketMQ 5 group's default retry policy is a customized backoff: the wait after
failed attempt n is ``next[n - 1]`` of ``1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m
20m 30m 1h 2h`` (the last value beyond the list), with 17 attempts. That list is
RocketMQ's delay-level table, so attempt n waits on delay level n of the client's table
(``ClientConfiguration(message_delay_level=...)`` configures both), and the attempts
are the consumer's ``max_attempts``.
"""

from __future__ import annotations

from dataclasses import dataclass

from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.v5.exceptions import IllegalArgumentException


@dataclass(frozen=True)
class CustomizedBackoff:
    """``get_next_attempt_delay(attempt)`` of upstream's customized policy, in levels."""

    levels: DelayLevels
    max_attempts: int

    def level(self, attempt: int) -> int:
        """The delay level the message waits on after failed ``attempt`` (1-based)."""
        if attempt < 1:
            raise IllegalArgumentException("attempt must be positive")
        return min(attempt, self.levels.max_level)

    def get_next_attempt_delay(self, attempt: int) -> float:
        """Seconds to wait after failed ``attempt``."""
        return self.levels.delay_ms(self.level(attempt)) / 1000
