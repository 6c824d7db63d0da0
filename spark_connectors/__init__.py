"""Spark side of rmqcompat: reading the namespace's topics with Spark's own ``kafka``
source, decoding RocketMQ headers and trace records, and the audit jobs.

Needs the ``spark`` extra (pyspark); ``import rmqcompat`` never imports this package.
"""

from __future__ import annotations

from rmqcompat.spark.decode import decode_headers, decode_traces
from rmqcompat.spark.reader import kafka_reader
from rmqcompat.spark.session import KAFKA_CONNECTOR, build_session

__all__ = ["KAFKA_CONNECTOR", "build_session", "decode_headers", "decode_traces", "kafka_reader"]
