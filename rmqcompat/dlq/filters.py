"""Which dead letters a command works on: ``--msg-id``, ``--key``, ``--tag``, ``--since``,
``--until`` (pure; ``--limit`` is applied by the reader)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from rmqcompat.dlq.errors import BadTimeError
from rmqcompat.dlq.model import DeadLetter

_RELATIVE = re.compile(r"([0-9]+)(ms|s|m|h|d|w)")
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}


def parse_time(text: str, now_ms: int) -> int:
    """Epoch milliseconds of ``text``: an ISO-8601 time (UTC unless it has an offset) or an
    age before ``now_ms`` such as ``90s``, ``15m``, ``2h``, ``7d``, ``1w``.

    Raises:
        BadTimeError: ``text`` is neither.
    """
    stripped = text.strip()
    relative = _RELATIVE.fullmatch(stripped)
    if relative:
        return now_ms - int(relative.group(1)) * _UNIT_MS[relative.group(2)]
    try:
        moment = datetime.fromisoformat(stripped)
    except ValueError:
        raise BadTimeError(
            f"{text!r} is not a time: use ISO 8601 (2026-11-23T10:00:00Z) or an age like 2h, "
            "30m, 7d"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def parse_future_time(text: str, now_ms: int) -> int:
    """Epoch milliseconds of ``text``: an ISO-8601 time or an interval after ``now_ms``
    such as ``10m`` (a deliver time).

    Raises:
        BadTimeError: ``text`` is neither.
    """
    relative = _RELATIVE.fullmatch(text.strip())
    if relative:
        return now_ms + int(relative.group(1)) * _UNIT_MS[relative.group(2)]
    return parse_time(text, now_ms)


@dataclass(frozen=True)
class DeadLetterFilter:
    """A dead letter matches when it passes every given criterion (an empty set: any).

    ``msg_ids`` match the message id, the origin message id or the DLQ position;
    ``keys`` any of the message's keys; ``tags`` its tag; ``since_ms``/``until_ms`` bound
    the dead-letter time (inclusive, exclusive).
    """

    msg_ids: frozenset[str] = frozenset()
    keys: frozenset[str] = frozenset()
    tags: frozenset[str] = frozenset()
    since_ms: int | None = None
    until_ms: int | None = None

    def matches(self, letter: DeadLetter) -> bool:
        if self.since_ms is not None and letter.dead_ms < self.since_ms:
            return False
        if self.until_ms is not None and letter.dead_ms >= self.until_ms:
            return False
        if self.tags and letter.tags not in self.tags:
            return False
        if self.keys and not self.keys.intersection(letter.keys):
            return False
        if not self.msg_ids:
            return True  # ids not derived: reading a whole DLQ decodes no header
        return not self.msg_ids.isdisjoint((letter.msg_id, letter.origin_msg_id, letter.dlq_id))


MATCH_ALL = DeadLetterFilter()
