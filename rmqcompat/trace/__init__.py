"""Message traces: Avro events about what happened to each message, on the trace topic.

Clients emit :mod:`events <rmqcompat.trace.events>` to a :class:`TraceSink`; the Spark
audit (``rmqcompat.spark``) reads them back. See the README's "Trace and audit".
"""

from __future__ import annotations

from rmqcompat.trace.batch import decode_record, encode_batch
from rmqcompat.trace.codec import TraceDecodeError, TraceRecord, decode, encode
from rmqcompat.trace.events import ConsumeStatus, Emitter, default_client_id
from rmqcompat.trace.schema import BATCH_HEADER, FINGERPRINT, HEADER, SCHEMA_JSON
from rmqcompat.trace.sink import (
    DisabledTraceSink,
    KafkaTraceSink,
    TraceSink,
    TraceStats,
)
from rmqcompat.trace.tracer import Tracer

__all__ = [
    "BATCH_HEADER",
    "FINGERPRINT",
    "HEADER",
    "SCHEMA_JSON",
    "ConsumeStatus",
    "DisabledTraceSink",
    "Emitter",
    "KafkaTraceSink",
    "TraceDecodeError",
    "TraceRecord",
    "TraceSink",
    "TraceStats",
    "Tracer",
    "decode",
    "decode_record",
    "default_client_id",
    "encode",
    "encode_batch",
]
