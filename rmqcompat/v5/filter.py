"""``FilterExpression``: what a 5.x consumer takes from a topic.

TAG expressions (``"*"``, ``"A || B"``) are evaluated by the core's tag filter. SQL92
property filters are not built on Kafka: they are refused with upstream's
:class:`UnsupportedException` when a consumer is created or subscribes.
"""

from __future__ import annotations

import enum

from rmqcompat.v5.exceptions import UNSUPPORTED, UnsupportedException


class FilterType(enum.IntEnum):
    """``apache.rocketmq.v2.FilterType`` codes."""

    TAG = 1
    SQL = 2


class FilterExpression:
    TAG_EXPRESSION_SUB_ALL = "*"

    def __init__(self, expression: str = TAG_EXPRESSION_SUB_ALL, filter_type: int = FilterType.TAG):
        self._expression = expression
        self._filter_type = filter_type

    @property
    def expression(self) -> str:
        return self._expression

    @property
    def filter_type(self) -> int:
        return self._filter_type

    def tag_expression(self) -> str:
        """The TAG expression for the core's subscription.

        Raises:
            UnsupportedException: an SQL92 filter (not built on Kafka).
        """
        if self._filter_type != FilterType.TAG:
            raise UnsupportedException(
                "SQL92 filter expressions are not supported by rmqcompat; filter by TAG",
                UNSUPPORTED,
            )
        return self._expression or self.TAG_EXPRESSION_SUB_ALL
