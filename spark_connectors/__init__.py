"""Spark side of rmqcompat: reading the namespace's topics with Spark's own ``kafka``
source, decoding RocketMQ headers and trace records, and the audit.

Needs the ``spark`` extra (pyspark), except :mod:`.master`; ``import rmqcompat`` never
imports this package, and importing it loads no pyspark: the names below are imported on
first use (PEP 562), so the CLI can check a ``--master`` before Spark is there.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what type checkers see; at runtime see __getattr__ below
    from rmqcompat.spark.decode import decode_headers, decode_traces
    from rmqcompat.spark.reader import kafka_reader
    from rmqcompat.spark.run import run_audit
    from rmqcompat.spark.session import KAFKA_CONNECTOR, build_session

#: public name -> the module of this package that defines it.
_EXPORTS: dict[str, str] = {
    "KAFKA_CONNECTOR": "session",
    "build_session": "session",
    "decode_headers": "decode",
    "decode_traces": "decode",
    "kafka_reader": "reader",
    "run_audit": "run",
}

__all__ = [
    "KAFKA_CONNECTOR",
    "build_session",
    "decode_headers",
    "decode_traces",
    "kafka_reader",
    "run_audit",
]


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
