"""Columns from raw Kafka rows: RocketMQ properties from headers, trace events from values.

Header decoding is pure Spark SQL (runs in the JVM). Trace records are decoded with
fastavro in an Arrow-batched Python function (``mapInArrow``): spark-avro, which would
give ``from_avro``, is not published for this Spark version.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from rmqcompat import properties as props
from rmqcompat.trace.codec import TraceDecodeError, decode
from rmqcompat.trace.schema import SCHEMA

_AVRO_TO_ARROW = {"string": pa.string(), "long": pa.int64(), "int": pa.int32()}
_AVRO_TO_SPARK = {"string": "string", "long": "bigint", "int": "int"}


def _field_type(field: Mapping[str, Any]) -> str:
    """The Avro type of a field: enums are strings, ``["null", T]`` is T."""
    kind = field["type"]
    if isinstance(kind, list):
        kind = next(branch for branch in kind if branch != "null")
    if isinstance(kind, dict):  # an enum: its symbol as text
        return "string"
    return str(kind)


_FIELDS = [(field["name"], _field_type(field)) for field in SCHEMA["fields"]]
#: Columns :func:`decode_traces` adds besides the event's fields.
EXTRA_COLUMNS = [("trace_error", "string"), ("kafka_partition", "int"), ("kafka_offset", "long")]
_ARROW_SCHEMA = pa.schema([(name, _AVRO_TO_ARROW[kind]) for name, kind in _FIELDS + EXTRA_COLUMNS])
#: The Spark schema of :func:`decode_traces` output (DDL).
TRACE_DDL = ", ".join(f"`{name}` {_AVRO_TO_SPARK[kind]}" for name, kind in _FIELDS + EXTRA_COLUMNS)
_NAMES = [name for name, _ in _FIELDS]
_TYPES = [_AVRO_TO_ARROW[kind] for _, kind in _FIELDS]
#: The field values of a decoded event, in schema order (codec.decode gives every field).
_values = operator.itemgetter(*_NAMES)
_UNREADABLE = (None,) * len(_NAMES)


def _decode_batch(batch: pa.RecordBatch) -> pa.RecordBatch:
    """Decodes column 0 (values); columns 1 and 2 (partition, offset) are passed on.

    Builds the output column by column (rows as tuples, transposed once): Arrow's
    conversion of a list of dicts costs more than decoding itself."""
    rows: list[tuple[Any, ...]] = []
    errors: list[str | None] = []
    for data in batch.column(0).to_pylist():
        try:
            rows.append(_values(decode(data or b"")))
            errors.append(None)
        except TraceDecodeError as exc:
            rows.append(_UNREADABLE)
            errors.append(str(exc))
    columns = zip(*rows, strict=True) if rows else ([] for _ in _NAMES)
    fields = [pa.array(column, kind) for column, kind in zip(columns, _TYPES, strict=True)]
    extra = [pa.array(errors, pa.string()), batch.column(1), batch.column(2)]
    return pa.RecordBatch.from_arrays([*fields, *extra], schema=_ARROW_SCHEMA)


def _decode_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        yield _decode_batch(batch)


def decode_traces(kafka_rows: DataFrame) -> DataFrame:
    """One row per trace record of ``kafka_rows`` (rows of Spark's ``kafka`` source).

    Every field of the trace schema becomes a column (enums as their symbol), plus
    ``trace_error`` (why a record could not be decoded: another schema version, not a
    trace record; its other fields are then null), ``kafka_partition`` and
    ``kafka_offset`` (where the record was read; unique per record of one trace topic).
    """
    raw = kafka_rows.select(
        F.col("value"), F.col("partition").alias("p"), F.col("offset").alias("o")
    )
    return raw.mapInArrow(_decode_batches, TRACE_DDL)


def header(name: str) -> Column:
    """The text of Kafka header ``name`` of a ``kafka`` source row (null if absent)."""
    matches = F.filter("headers", lambda entry: entry["key"] == F.lit(name))
    return F.try_element_at(matches, F.lit(1))["value"].cast("string")


def decode_headers(
    kafka_rows: DataFrame, logical_names: Mapping[str, str] | None = None
) -> DataFrame:
    """``kafka_rows`` (read with ``includeHeaders``) with RocketMQ's properties as columns:
    ``msg_id`` (``UNIQ_KEY``), ``tags``, ``keys``, ``reconsume_times``,
    ``origin_msg_id``, ``retry_topic``, ``real_topic``, ``born_ms``; and
    ``logical_topic`` from ``logical_names`` (physical -> logical, e.g. from
    :func:`rmqcompat.topics.provision.physical_names` inverted).
    """
    names = logical_names or {}
    mapping = F.create_map(*[F.lit(item) for pair in names.items() for item in pair])
    return kafka_rows.select(
        "*",
        header(props.UNIQ_KEY).alias("msg_id"),
        header(props.TAGS).alias("tags"),
        header(props.KEYS).alias("keys"),
        F.coalesce(header(props.RECONSUME_TIME).try_cast("int"), F.lit(0)).alias("reconsume_times"),
        header(props.ORIGIN_MESSAGE_ID).alias("origin_msg_id"),
        header(props.RETRY_TOPIC).alias("retry_topic"),
        header(props.REAL_TOPIC).alias("real_topic"),
        header(props.BORN_TIMESTAMP).try_cast("long").alias("born_ms"),
        (mapping[F.col("topic")] if names else F.lit(None).cast("string")).alias("logical_topic"),
    )
