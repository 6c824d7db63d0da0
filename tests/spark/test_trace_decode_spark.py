"""decode_traces through Spark's kafka source: records the sink packed give one row per
event, each at a unique (partition, offset, index), and an unreadable record one row."""

from __future__ import annotations

import uuid

import pytest
from audit_seed import write_events
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from rmqcompat.config import ClientConfig
from rmqcompat.spark import decode_traces, kafka_reader
from rmqcompat.topics.naming import TRACE_TOPIC
from rmqcompat.trace import Emitter
from rmqcompat.trace.batch import MAX_EVENTS

pytestmark = pytest.mark.integration


def test_one_row_per_event_at_a_unique_place(spark: SparkSession, kafka_bootstrap: str) -> None:
    namespace = f"dec{uuid.uuid4().hex[:10]}"
    client = ClientConfig(kafka_bootstrap, namespace)
    emitter = Emitter("h@1@P", namespace)
    count = MAX_EVENTS * 2 + 30  # buffered before the sink starts: three records
    events = [emitter.publish(f"id{n}", "T", f"{namespace}.T") for n in range(count)]
    write_events(client, events, garbage=[b"junk"])
    rows = decode_traces(kafka_reader(spark, kafka_bootstrap, [TRACE_TOPIC], namespace).load())
    read = rows.where(F.col("trace_error").isNull())
    assert sorted(r["msg_id"] for r in read.select("msg_id").collect()) == sorted(
        f"id{n}" for n in range(count)
    )
    places = read.groupBy("kafka_partition", "kafka_offset").agg(
        F.count("*").alias("events"), F.max("trace_index").alias("last")
    )
    sizes = sorted((r["events"], r["last"]) for r in places.collect())
    assert sizes == [(30, 29), (MAX_EVENTS, MAX_EVENTS - 1), (MAX_EVENTS, MAX_EVENTS - 1)]
    errors = [r["trace_error"] for r in rows.where(F.col("trace_error").isNotNull()).collect()]
    assert errors == ["not Avro single-object encoded (marker C3 01 missing)"]
