"""Which half messages of one producer group are still undecided, and which are due a check.

Pure bookkeeping, fed by the check service with the half and op records it reads and
driven by an injected clock. Ops may be read before their half (the two topics are read
independently), so final ops and check counts are remembered until the half shows up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rmqcompat.transaction.records import CHECK_IMMUNITY_TIME_IN_SECONDS, Half, Op
from rmqcompat.transaction.state import CheckSettings


@dataclass
class _Checks:
    count: int = 0
    last_ms: int | None = None


@dataclass(frozen=True)
class Due:
    """A half message whose check is due; ``discard`` once it used up ``check_max``."""

    half: Half
    checks_done: int
    discard: bool


def first_check_ms(half: Half, settings: CheckSettings) -> int:
    """Born time plus the immunity: the message's own ``CHECK_IMMUNITY_TIME_IN_SECONDS``
    when it carries a number of seconds, shorter or longer than the settings' (RocketMQ's
    ``getImmunityTime`` replaces ``transactionTimeOut`` with it); else, and for -1 or a
    value that is not a whole number, the settings' ``check_immunity_time_s``."""
    own = half.message.properties.get(CHECK_IMMUNITY_TIME_IN_SECONDS, "")
    immunity = settings.immunity_ms
    if _JAVA_LONG.fullmatch(own) and int(own) != -1:  # Long.parseLong's syntax; -1: default
        immunity = int(own) * 1000
    return half.message.born_timestamp + immunity


_JAVA_LONG = re.compile(r"[-+]?[0-9]{1,18}")


class PendingHalves:
    """Undecided half messages of ``group``, per half partition."""

    def __init__(self, group: str, settings: CheckSettings) -> None:
        self.group = group
        self.settings = settings
        self._halves: dict[int, dict[int, Half]] = {}
        self._final: dict[int, set[int]] = {}
        self._checks: dict[tuple[int, int], _Checks] = {}
        self._start: dict[int, int] = {}

    def add_half(self, half: Half) -> None:
        """A half record read from partition ``half.partition``; other groups' are ignored."""
        if half.group != self.group:
            return
        done = self._final.get(half.partition, set())
        if half.offset in done:
            done.discard(half.offset)
            self._checks.pop((half.partition, half.offset), None)
            return
        self._halves.setdefault(half.partition, {})[half.offset] = half

    def apply_op(self, partition: int, op: Op, stored_ms: int) -> None:
        """An op record read from op partition ``partition`` (stored at ``stored_ms``)."""
        if op.group != self.group or op.half_offset < self._start.get(partition, 0):
            return
        key = (partition, op.half_offset)
        if op.kind.final:
            self._checks.pop(key, None)
            if self._halves.get(partition, {}).pop(op.half_offset, None) is None:
                self._final.setdefault(partition, set()).add(op.half_offset)
            return
        checks = self._checks.setdefault(key, _Checks())
        if op.check_times >= checks.count:
            checks.count, checks.last_ms = op.check_times, stored_ms

    def due(self, partition: int, now_ms: int) -> list[Due]:
        """Half messages of ``partition`` due a check (or a discard) at ``now_ms``."""
        out = []
        for offset, half in self._halves.get(partition, {}).items():
            checks = self._checks.get((partition, offset), _Checks())
            if checks.last_ms is None:
                due_ms = first_check_ms(half, self.settings)
            else:
                due_ms = checks.last_ms + self.settings.interval_ms
            if now_ms >= due_ms:
                discard = checks.count >= self.settings.check_max
                out.append(Due(half, checks.count, discard))
        return out

    def pending(self, partition: int) -> int:
        return len(self._halves.get(partition, {}))

    def watermark(self, partition: int, position: int) -> int:
        """Where reading ``partition`` may restart: its oldest undecided half, else
        ``position`` (the next offset to read)."""
        halves = self._halves.get(partition)
        return min(halves) if halves else position

    def forget(self, partition: int) -> None:
        """Drop a partition this service no longer owns (another member checks it now)."""
        self._halves.pop(partition, None)
        self._final.pop(partition, None)
        self._start.pop(partition, None)
        for key in [key for key in self._checks if key[0] == partition]:
            del self._checks[key]

    def begin(self, partition: int, start: int) -> None:
        """This service reads half ``partition`` from offset ``start`` on: ops about
        halves below it are decided already and are not remembered."""
        self._start[partition] = start
