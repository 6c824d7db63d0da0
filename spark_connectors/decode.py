"""Columns from raw Kafka rows: RocketMQ properties from headers, trace events from values.

Header decoding is pure Spark SQL (runs in the JVM). Trace records are decoded a column
at a time (:mod:`rmqcompat.spark.columnar`) in an Arrow-batched Python function
(``mapInArrow``): spark-avro, which would give ``from_avro``, is not published for this
Spark version.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from rmqcompat import properties as props
from rmqcompat.errors import ConfigError
from rmqcompat.spark.columnar import FIELDS, decode_columns
from rmqcompat.trace.schema import DROPPED_HEADER

_SPARK_TYPES = {"long": "bigint", "int": "int"}
#: Columns :func:`decode_traces` adds besides the event's fields.
EXTRA_COLUMNS = [
    ("trace_error", "string"),
    ("kafka_partition", "int"),
    ("kafka_offset", "bigint"),
    ("trace_index", "int"),
    ("trace_dropped", "string"),
]
_EXTRA_ARROW = [
    ("trace_error", pa.string()),
    ("kafka_partition", pa.int32()),
    ("kafka_offset", pa.int64()),
    ("trace_index", pa.int32()),
    ("trace_dropped", pa.string()),
]
#: Bytes of trace records decoded in one columnar pass (some 100,000 events): large
#: enough that numpy's per-call costs vanish, small enough to stay in the CPU's caches.
_BYTES_PER_PASS = 16 << 20
_FIELD_NAMES = tuple(field.name for field in FIELDS)
_BY_NAME = {field.name: field for field in FIELDS}


def _ddl(names: Sequence[str]) -> str:
    """The Spark schema (DDL) of :func:`decode_traces` output with fields ``names``."""
    columns = [(name, _SPARK_TYPES.get(_BY_NAME[name].kind, "string")) for name in names]
    return ", ".join(f"`{name}` {kind}" for name, kind in columns + EXTRA_COLUMNS)


class _Decoder:
    """The ``mapInArrow`` function: decodes column 0 (values) of each batch into the
    wanted fields, one row per event; columns 1 to 3 (partition, offset, drop count) are
    repeated for every event of their record."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)
        fields = [(name, _BY_NAME[name].arrow_type) for name in self.names]
        self.schema = pa.schema(fields + _EXTRA_ARROW)

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for start, length in _passes(batch.column(0)):
                part = batch.slice(start, length)
                decoded = decode_columns(part.column(0), self.names)
                partition, offset, dropped = (
                    part.column(i).take(decoded.records) for i in (1, 2, 3)
                )
                extra = [decoded.errors, partition, offset, decoded.index, dropped]
                yield pa.RecordBatch.from_arrays([*decoded.columns, *extra], schema=self.schema)


def _passes(values: pa.Array) -> Iterator[tuple[int, int]]:
    """``(first row, rows)`` of consecutive slices of ``values`` of about
    :data:`_BYTES_PER_PASS` bytes each (a larger record alone)."""
    ends = pc.cumulative_sum(pc.fill_null(pc.binary_length(values), 0)).to_numpy()
    start = 0
    while start < len(values):
        before = ends[start - 1] if start else 0
        stop = int(np.searchsorted(ends, before + _BYTES_PER_PASS, side="right"))
        stop = max(stop, start + 1)
        yield start, stop - start
        start = stop


def decode_traces(kafka_rows: DataFrame, fields: Sequence[str] | None = None) -> DataFrame:
    """One row per trace event in the records of ``kafka_rows`` (rows of Spark's
    ``kafka`` source).

    Every field of the trace schema (or only ``fields``, in that order: the others are
    skipped while decoding) becomes a column (enums as their symbol), plus
    ``trace_error`` (why an event, or a whole record, could not be decoded: another
    schema version, not a trace record; its other fields are then null),
    ``kafka_partition`` and ``kafka_offset`` (the record it was read from) and
    ``trace_index`` (its place in that record): the three are unique per event of one
    trace topic; and ``trace_dropped``, its record's
    :data:`~rmqcompat.trace.schema.DROPPED_HEADER` (null if none).

    Raises:
        ConfigError: a name in ``fields`` is not a field of the trace schema.
    """
    names = _FIELD_NAMES if fields is None else tuple(fields)
    unknown = sorted(set(names) - set(_FIELD_NAMES))
    if unknown:
        raise ConfigError(f"not fields of the trace schema: {', '.join(unknown)}")
    raw = kafka_rows.select(
        F.col("value"),
        F.col("partition").alias("p"),
        F.col("offset").alias("o"),
        header(DROPPED_HEADER).alias("d"),
    )
    return raw.mapInArrow(_Decoder(names), _ddl(names))


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
