"""Each implementation of concurrent consumption's batch and listener context: the Python
classes (the reference) and the compiled core's, which the consumers use where it is
built. Tests that take the ``batch_kind`` fixture (``tests/unit/consumer/conftest.py``)
hold both to the same behaviour."""

from __future__ import annotations

from typing import NamedTuple

from compiled_core import compiled_core

from rmqcompat.consumer.dispatch import ConsumeBatch
from rmqcompat.consumer.listener import ConsumeConcurrentlyContext

KINDS = ["python", "compiled"]


class BatchKind(NamedTuple):
    batch: type[ConsumeBatch]
    context: type[ConsumeConcurrentlyContext]


def batch_kind(name: str) -> BatchKind:
    """The classes of kind ``name`` (one of :data:`KINDS`); the compiled ones skip the test
    where the core is not built."""
    if name == "python":
        return BatchKind(ConsumeBatch, ConsumeConcurrentlyContext)
    core = compiled_core()
    return BatchKind(core.ConsumeBatch, core.ConsumeConcurrentlyContext)
