"""RocketMQ's delay-level table (``messageDelayLevel``) and the retry ladder on it."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from rmqcompat.errors import ConfigError
from rmqcompat.topics.naming import delay_topic

DEFAULT_MESSAGE_DELAY_LEVEL = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"

#: RocketMQ's first retry waits level 3; retry n waits level ``3 + (n - 1)``.
FIRST_RETRY_LEVEL = 3

_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_TOKEN = re.compile(r"([0-9]+)(ms|s|m|h|d)")


def parse_duration_ms(token: str) -> int:
    """Parse one RocketMQ duration token (``100ms``, ``10s``, ``1m``, ``2h``, ``1d``)."""
    match = _TOKEN.fullmatch(token.strip())
    if match is None:
        raise ConfigError(f"delay level {token!r} is not <number><ms|s|m|h|d>")
    value = int(match.group(1)) * _UNIT_MS[match.group(2)]
    if value <= 0:
        raise ConfigError(f"delay level {token!r} must be longer than zero")
    return value


def format_duration_ms(millis: int) -> str:
    """Canonical text of a duration: the largest unit that divides it exactly."""
    for unit in ("d", "h", "m", "s"):
        if millis % _UNIT_MS[unit] == 0:
            return f"{millis // _UNIT_MS[unit]}{unit}"
    return f"{millis}ms"


@dataclass(frozen=True)
class DelayLevels:
    """An immutable delay table; levels are numbered from 1 as in RocketMQ.

    Build it with :meth:`parse`. Durations must be strictly increasing so that each
    level (and so each level topic) has its own delay.
    """

    durations_ms: tuple[int, ...]

    @classmethod
    def parse(cls, text: str = DEFAULT_MESSAGE_DELAY_LEVEL) -> DelayLevels:
        """Parse RocketMQ's ``messageDelayLevel`` syntax, e.g. ``"1s 5s 10s 30s 1m"``.

        Raises:
            ConfigError: a token is malformed, or the table is empty or not increasing.
        """
        durations = tuple(parse_duration_ms(token) for token in text.split())
        if not durations:
            raise ConfigError("message_delay_level must name at least one delay level")
        for previous, current in itertools.pairwise(durations):
            if current <= previous:
                raise ConfigError(
                    f"message_delay_level {text!r} must be strictly increasing "
                    f"({format_duration_ms(current)} follows {format_duration_ms(previous)})"
                )
        return cls(durations)

    @property
    def max_level(self) -> int:
        return len(self.durations_ms)

    def check(self, level: int) -> int:
        """Return ``level`` if it exists in this table, else raise :class:`ConfigError`."""
        if not 1 <= level <= self.max_level:
            raise ConfigError(f"delay level {level} is outside 1..{self.max_level}")
        return level

    def delay_ms(self, level: int) -> int:
        return self.durations_ms[self.check(level) - 1]

    def topic(self, level: int) -> str:
        """The logical topic that parks messages of ``level``."""
        return delay_topic(format_duration_ms(self.delay_ms(level)))

    def topics(self) -> list[str]:
        return [self.topic(level) for level in range(1, self.max_level + 1)]

    def level_of_topic(self, logical: str) -> int | None:
        """The level whose topic is ``logical``, or None if no level of this table has it."""
        for level in range(1, self.max_level + 1):
            if self.topic(level) == logical:
                return level
        return None

    def retry_level(self, reconsume_times: int) -> int:
        """RocketMQ's level for a message that already failed ``reconsume_times`` times."""
        return min(FIRST_RETRY_LEVEL + reconsume_times, self.max_level)

    def hop_level(self, remaining_ms: int) -> int | None:
        """The largest level whose delay still fits in ``remaining_ms``, or None if none does.

        Arbitrary delivery times travel as a chain of such hops.
        """
        fitting = [lvl for lvl, ms in enumerate(self.durations_ms, 1) if ms <= remaining_ms]
        return fitting[-1] if fitting else None
