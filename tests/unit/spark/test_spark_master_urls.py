"""Spark master URLs: what Spark accepts, and a local master's threads (no pyspark)."""

from __future__ import annotations

import os

import pytest

from rmqcompat.errors import ConfigError
from rmqcompat.spark.master import check_master, local_threads


@pytest.mark.parametrize(
    ("master", "threads"),
    [
        ("local", 1),
        ("local[2]", 2),
        ("local[16,3]", 16),
        ("local[*]", os.cpu_count() or 1),
        ("local[*, 2]", os.cpu_count() or 1),
        ("spark://h:7077", None),
        ("local[0]", None),
        ("local[x]", None),
    ],
)
def test_local_threads(master: str, threads: int | None) -> None:
    assert local_threads(master) == threads


@pytest.mark.parametrize(
    "master",
    ["local", "local[2]", "local[*]", "spark://h:7077", "spark://127.0.0.1:1",
     "spark://m1.example.com:7077,m2.example.com:7077", "spark://[::1]:65535",
     "k8s://https://h:6443", "yarn", "local-cluster[2,1,1024]"],
)  # fmt: skip
def test_masters_spark_accepts(master: str) -> None:
    check_master(master)


@pytest.mark.parametrize(
    "master",
    ["bad://", "local[x]", "local[0]", "localhost", "", "Yarn", "spark://", "spark://h",
     "spark://h:", "spark://h:0", "spark://h:65536", "spark://h:7077/", "spark://h:7077,",
     "spark://u@h:7077", "spark:// h:7077", "spark://h:70x"],
)  # fmt: skip
def test_masters_spark_refuses(master: str) -> None:
    with pytest.raises(ConfigError, match="is not a Spark master: local, local\\[N\\]"):
        check_master(master)
