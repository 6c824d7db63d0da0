"""One local SparkSession for every Spark test (local[2], UI off, one shuffle partition),
with Spark's Kafka connector resolved into the rmqcompat cache on first use."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from rmqcompat.cache import cache_root
from rmqcompat.spark import build_session

#: Why Spark's kafka source cannot be checked on Tansu.
TANSU_WATERMARK_BUG = (
    "Tansu 0.6.0 advances a partition's high watermark by one per produced batch, not per "
    "record (10 records in one batch: high watermark 1), so Spark's kafka source, which "
    "reads up to the high watermark, stops early"
)


@pytest.fixture(scope="session")
def spark(broker_kind: str) -> Iterator[SparkSession]:
    if broker_kind == "tansu":
        pytest.skip(TANSU_WATERMARK_BUG)
    session = build_session(
        "rmqcompat-tests",
        "local[2]",
        ivy_dir=cache_root() / "ivy",
        extra={"spark.sql.shuffle.partitions": "1", "spark.default.parallelism": "2"},
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
