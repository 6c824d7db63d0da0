"""RocketMQ tag subscription expressions: ``"*"`` (everything) or ``"A || B || C"``."""

from __future__ import annotations

from dataclasses import dataclass

SUB_ALL = "*"


@dataclass(frozen=True)
class TagFilter:
    """A parsed expression; ``tags`` is None for ``"*"`` (everything matches).

    A message without tags matches only ``"*"``, as in RocketMQ.
    """

    expression: str
    tags: frozenset[str] | None

    @classmethod
    def parse(cls, expression: str | None) -> TagFilter:
        """Parse an expression (None or empty means ``"*"``).

        As RocketMQ's ``FilterAPI.buildSubscriptionData``: tags are split on ``||`` and
        trimmed, and empty ones are dropped (``"A || "`` is ``"A"``); an expression of
        empty tags only (``"||"``) keeps no tag, so it matches nothing, as there.
        """
        text = (expression or "").strip()
        if text in ("", SUB_ALL):
            return cls(SUB_ALL, None)
        tags = (tag.strip() for tag in text.split("||"))
        return cls(text, frozenset(tag for tag in tags if tag))

    def matches(self, tag: str | None) -> bool:
        if self.tags is None:
            return True
        return tag is not None and tag in self.tags
