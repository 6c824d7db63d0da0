"""RocketMQ's delay-level table (``messageDelayLevel``) and the retry ladder on it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from rmqcompat.errors import ConfigError
from rmqcompat.topics.naming import SCHEDULE_PREFIX, delay_topic, to_kafka_topic

DEFAULT_MESSAGE_DELAY_LEVEL = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"

_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_TOKEN = re.compile(r"([0-9]+)(ms|s|m|h|d)")


def parse_duration_ms(token: str) -> int:
    """Parse one RocketMQ duration token (``0s``, ``100ms``, ``10s``, ``1m``, ``2h``, ``1d``).

    ``ms`` is rmqcompat's extension; RocketMQ knows s, m, h and d.
    """
    match = _TOKEN.fullmatch(token.strip())
    if match is None:
        raise ConfigError(f"delay level {token!r} is not <number><ms|s|m|h|d>")
    return int(match.group(1)) * _UNIT_MS[match.group(2)]


def format_duration_ms(millis: int) -> str:
    """Canonical text of a positive duration: the largest unit that divides it exactly."""
    for unit in ("d", "h", "m", "s"):
        if millis % _UNIT_MS[unit] == 0:
            return f"{millis // _UNIT_MS[unit]}{unit}"
    return f"{millis}ms"


def topic_delay_ms(logical: str) -> int | None:
    """The delay of a level topic (``%SCHEDULE%10s`` -> 10000), or None for any other topic.

    Level topics are named by their delay, so any forwarder can serve any table's topics.
    """
    duration = logical.removeprefix(SCHEDULE_PREFIX)
    if duration == logical or _TOKEN.fullmatch(duration) is None:
        return None
    return parse_duration_ms(duration) or None


def level_topic_pattern(namespace: str) -> str:
    """The regular expression (librdkafka's and Python's) of every level topic of ``namespace``.

    Only canonical level names match (``<ns>.rmq.delay.<n><unit>``, n without a leading
    zero), those :func:`topic_delay_ms` gives a delay for.
    """
    prefix = to_kafka_topic(delay_topic("1s"), namespace).removesuffix("1s")
    return "^" + prefix.replace(".", "\\.") + "[1-9][0-9]*(ms|s|m|h|d)$"


@dataclass(frozen=True)
class DelayLevels:
    """An immutable delay table; levels are numbered from 1 as in RocketMQ.

    Build it with :meth:`parse`. As RocketMQ's ``parseDelayLevel``, any table is accepted:
    any order, repeated delays (``1s 1s 5s``, a flat tail for a constant interval) and
    zero delays. Levels with the same delay share one topic (topics are named by delay);
    a level of delay 0 has no topic: its messages are due at once and go straight to
    their real topic (see :mod:`rmqcompat.parking`).
    """

    durations_ms: tuple[int, ...]

    @classmethod
    def parse(cls, text: str = DEFAULT_MESSAGE_DELAY_LEVEL) -> DelayLevels:
        """Parse RocketMQ's ``messageDelayLevel`` syntax, e.g. ``"1s 5s 10s 30s 1m"``.

        Raises:
            ConfigError: a token is malformed, or the table is empty.
        """
        durations = tuple(parse_duration_ms(token) for token in text.split())
        if not durations:
            raise ConfigError("message_delay_level must name at least one delay level")
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
        """The logical topic that parks messages of ``level`` (shared by equal delays).

        Raises:
            ConfigError: ``level`` is outside the table or its delay is 0 (no topic).
        """
        topic = self._level_topics[self.check(level) - 1]
        if topic is None:
            raise ConfigError(f"delay level {level} has delay 0: it is delivered at once")
        return topic

    @cached_property
    def _level_topics(self) -> tuple[str | None, ...]:
        """Each level's topic (None for a delay of 0), named once per table: parking asks
        for one per message."""
        return tuple(
            delay_topic(format_duration_ms(ms)) if ms > 0 else None for ms in self.durations_ms
        )

    def topics(self) -> list[str]:
        """The distinct level topics of the table, in level order."""
        return list(dict.fromkeys(topic for topic in self._level_topics if topic is not None))

    @property
    def _positive(self) -> list[int]:
        return [ms for ms in self.durations_ms if ms > 0]

    def hop_level(self, remaining_ms: int) -> int | None:
        """The level of the longest delay that still fits in ``remaining_ms``; None if none.

        Chosen by delay, not by index, so decreasing or repeating tables hop as far as
        they can. Zero delays never count (a hop must move time on). Arbitrary delivery
        times travel as a chain of such hops.
        """
        fitting = [ms for ms in self._positive if ms <= remaining_ms]
        return self.durations_ms.index(max(fitting)) + 1 if fitting else None

    def shortest_level(self) -> int:
        """The level of the shortest non-zero delay (a timer due sooner still parks there).

        Raises:
            ConfigError: every delay of the table is 0.
        """
        if not self._positive:
            raise ConfigError("a delay table of zero delays cannot hold timer messages")
        return self.durations_ms.index(min(self._positive)) + 1
