"""Session settings: Ivy resolves the connector once, later sessions take its jars from
the recorded list (no JVM started here: the settings only)."""

from __future__ import annotations

from pathlib import Path

from rmqcompat.spark.session import (
    KAFKA_CONNECTOR,
    _record_resolution,
    resolved_list,
    session_config,
)

_CONNECTOR = "org.apache.spark_spark-sql-kafka-0-10_2.13-4.2.0.jar"
_CLIENTS = "org.apache.kafka_kafka-clients-3.9.2.jar"
_BUNDLED = "org.apache.hadoop_hadoop-client-api-3.5.0.jar"  # pyspark ships this one


def _resolved(ivy: Path) -> list[Path]:
    (ivy / "jars").mkdir(parents=True)
    jars = [ivy / "jars" / name for name in (_CONNECTOR, _CLIENTS, _BUNDLED)]
    for jar in jars:
        jar.write_bytes(b"PK")
    return jars


def test_first_start_resolves_through_ivy(tmp_path: Path) -> None:
    config = session_config("local[2]", ivy_dir=tmp_path)
    assert config["spark.jars.packages"] == KAFKA_CONNECTOR
    assert config["spark.jars.ivy"] == str(tmp_path)
    assert "spark.jars" not in config


def test_a_recorded_resolution_is_used_without_ivy(tmp_path: Path) -> None:
    jars = _resolved(tmp_path)
    _record_resolution(tmp_path, ",".join(jar.as_uri() for jar in jars))
    assert resolved_list(tmp_path).read_text().split() == [str(jar) for jar in jars]
    config = session_config("local[2]", ivy_dir=tmp_path)
    assert "spark.jars.packages" not in config
    # the jar pyspark already has at that version is not put on the class path twice
    assert config["spark.jars"].split(",") == [str(jars[0]), str(jars[1])]


def test_a_missing_jar_sends_the_next_start_back_to_ivy(tmp_path: Path) -> None:
    jars = _resolved(tmp_path)
    _record_resolution(tmp_path, ",".join(jar.as_uri() for jar in jars))
    jars[1].unlink()
    assert session_config("local[2]", ivy_dir=tmp_path)["spark.jars.packages"] == KAFKA_CONNECTOR


def test_a_resolution_naming_absent_jars_is_not_recorded(tmp_path: Path) -> None:
    _record_resolution(tmp_path, (tmp_path / "gone.jar").as_uri())
    assert not resolved_list(tmp_path).exists()


def test_a_local_master_gets_a_larger_driver_heap_unless_told(tmp_path: Path) -> None:
    assert session_config("local[2]", ivy_dir=tmp_path)["spark.driver.memory"] == "2g"
    told = session_config("local[*]", ivy_dir=tmp_path, extra={"spark.driver.memory": "6g"})
    assert told["spark.driver.memory"] == "6g"
    assert "spark.driver.memory" not in session_config("spark://h:7077", ivy_dir=tmp_path)


def test_a_local_master_caches_uncompressed_unless_told(tmp_path: Path) -> None:
    key = "spark.sql.inMemoryColumnarStorage.compressed"
    assert session_config("local[2]", ivy_dir=tmp_path)[key] == "false"
    assert session_config("local[2]", ivy_dir=tmp_path, extra={key: "true"})[key] == "true"
    assert key not in session_config("yarn", ivy_dir=tmp_path)


def test_a_local_master_runs_the_throughput_collector_unless_told(tmp_path: Path) -> None:
    key = "spark.driver.extraJavaOptions"
    assert session_config("local[*]", ivy_dir=tmp_path)[key] == "-XX:+UseParallelGC"
    told = session_config("local[*]", ivy_dir=tmp_path, extra={key: "-Xss4m"})
    assert told[key] == "-Xss4m"
    assert key not in session_config("spark://h:7077", ivy_dir=tmp_path)
