"""What a local master's JVM runs with: the settings of ``session_config`` reach it."""

from __future__ import annotations

from pyspark.sql import SparkSession


def test_a_local_session_runs_the_throughput_collector_with_a_2g_heap(spark: SparkSession) -> None:
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    beans = jvm.java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()
    assert sorted(bean.getName() for bean in beans) == ["PS MarkSweep", "PS Scavenge"]
    assert jvm.java.lang.Runtime.getRuntime().maxMemory() > 1.5 * 2**30
