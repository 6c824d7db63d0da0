"""RocketMQ tag subscription expressions: ``"*"`` (everything) or ``"A || B || C"``."""

from __future__ import annotations

from dataclasses import dataclass

from rmqcompat.errors import ConfigError

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

        Raises:
            ConfigError: the expression has an empty tag (e.g. ``"A || "``).
        """
        text = (expression or "").strip()
        if text in ("", SUB_ALL):
            return cls(SUB_ALL, None)
        tags = [tag.strip() for tag in text.split("||")]
        if any(not tag for tag in tags):
            raise ConfigError(f"subscription expression {expression!r} has an empty tag")
        return cls(text, frozenset(tags))

    def matches(self, tag: str | None) -> bool:
        if self.tags is None:
            return True
        return tag is not None and tag in self.tags
