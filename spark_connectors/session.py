"""A SparkSession with Spark's Kafka source on its class path.

The connector ``org.apache.spark:spark-sql-kafka-0-10_2.13`` must match the installed
pyspark exactly; it is resolved from Maven Central through ``spark.jars.packages`` into
an Ivy cache (``<rmqcompat cache>/ivy``), or taken from a directory of resolved jars
(offline use: copy ``<cache>/ivy/jars`` to the machine and pass it as ``jars_dir``).

Ivy resolves once: the first session records the jars it resolved in a list beside the
cache (:func:`resolved_list`), and later sessions put those jars on the class path
directly (``spark.jars``), with no Ivy run at start-up, while every one of them is
still there. Jars pyspark itself ships at the same version are left out either way.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import unquote, urlparse

import pyspark
from pyspark import SparkContext
from pyspark.sql import SparkSession

from rmqcompat.errors import ConfigError
from rmqcompat.spark.class_archive import ClassArchive
from rmqcompat.spark.master import local_threads

KAFKA_CONNECTOR = f"org.apache.spark:spark-sql-kafka-0-10_2.13:{pyspark.__version__}"
#: Heap of a ``local`` master's JVM (it applies when this process starts that JVM).
LOCAL_DRIVER_MEMORY = "2g"
#: JVM options of a ``local`` master's JVM (likewise).
LOCAL_JAVA_OPTIONS = "-XX:+UseParallelGC"


def session_config(
    master: str = "local[*]",
    *,
    ivy_dir: Path,
    jars_dir: Path | None = None,
    class_archive: ClassArchive | None = None,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The Spark settings :func:`build_session` applies (``extra`` wins). A local
    master's JVM maps ``class_archive``, or writes it as it exits if there is none yet.

    Raises:
        ConfigError: ``jars_dir`` does not hold the Kafka connector jar of this pyspark.
    """
    config = {
        "spark.master": master,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        # the audit's aggregates are small; Spark's default of 200 tasks each costs more
        # than it does
        "spark.sql.shuffle.partitions": str(local_threads(master) or 4),
        # trace records handed to Python per call (Spark's default: 10,000 records and no
        # byte bound; a record holds up to 200 events, 64 KiB)
        "spark.sql.execution.arrow.maxRecordsPerBatch": "50000",
        "spark.sql.execution.arrow.maxBytesPerBatch": str(64 << 20),
    }
    if master.startswith("local"):
        # workers without the working directory first on their path, where a source
        # checkout's rmqcompat/ folder would hide the installed package's rmqcompat.spark
        config["spark.executorEnv.PYTHONSAFEPATH"] = "1"
        # the driver is the executor too: Spark's default heap (1g) leaves each task some
        # 200 MB, and the per-message aggregation of a million messages spills to disk
        config["spark.driver.memory"] = LOCAL_DRIVER_MEMORY
        # cores, not memory, bound a local run: the audit's cache of decoded events is
        # built once and scanned by every query after, and compressing it cost more than it saved
        # (the 2.3M events of a million messages: 234 MB instead of 82; beyond the heap's
        # storage share Spark keeps the rest on disk)
        config["spark.sql.inMemoryColumnarStorage.compressed"] = "false"
        # the throughput collector: G1's concurrent work and write barriers compete with
        # the tasks for the few cores of one machine (a fresh `rmqcompat audit` of a
        # million messages' events on local[2], 6 pairs: 39.8 -> 36.9 s)
        archive = class_archive.java_options() if class_archive is not None else ""
        config["spark.driver.extraJavaOptions"] = f"{LOCAL_JAVA_OPTIONS} {archive}".strip()
    jars = _connector_jars(jars_dir) if jars_dir is not None else _resolved_jars(ivy_dir)
    if jars is None:
        config["spark.jars.packages"] = KAFKA_CONNECTOR
        config["spark.jars.ivy"] = str(ivy_dir)
    else:
        config["spark.jars"] = ",".join(str(jar) for jar in _not_bundled(jars))
    config.update(extra or {})
    return config


def resolved_list(ivy_dir: Path) -> Path:
    """The file listing the jars Ivy resolved for this pyspark's connector (one a line)."""
    return ivy_dir / f"spark-sql-kafka-{pyspark.__version__}.jars"


def _resolved_jars(ivy_dir: Path) -> list[Path] | None:
    """The jars of an earlier resolution, if it was recorded and all are still there."""
    try:
        jars = [Path(line) for line in resolved_list(ivy_dir).read_text("utf-8").split()]
    except OSError:
        return None
    return jars if jars and all(jar.is_file() for jar in jars) else None


def _record_resolution(ivy_dir: Path, spark_jars: str) -> None:
    """Writes :func:`resolved_list` from the ``spark.jars`` Ivy's resolution left."""
    jars = [Path(unquote(urlparse(uri).path)) for uri in spark_jars.split(",") if uri]
    if not jars or not all(jar.is_file() for jar in jars):
        return
    listing = resolved_list(ivy_dir)
    partial = listing.with_name(f"{listing.name}.{os.getpid()}.tmp")
    try:
        partial.write_text("".join(f"{jar}\n" for jar in jars), "utf-8")
        partial.replace(listing)  # whole or not at all: read by other processes
    except OSError:  # a read-only cache: the next session resolves through Ivy again
        partial.unlink(missing_ok=True)


def _not_bundled(jars: Iterable[Path]) -> list[Path]:
    """``jars`` less those pyspark ships itself (same artifact and version: Ivy names a
    jar ``<group>_<artifact>-<version>.jar``, pyspark ``<artifact>-<version>.jar``)."""
    bundled = {jar.name for jar in (Path(pyspark.__file__).parent / "jars").glob("*.jar")}
    return [jar for jar in jars if jar.name.split("_", 1)[-1] not in bundled]


def _connector_jars(jars_dir: Path) -> list[Path]:
    jars = sorted(jars_dir.glob("*.jar"))
    wanted = f"spark-sql-kafka-0-10_2.13-{pyspark.__version__}.jar"
    if not any(jar.name.endswith(wanted) for jar in jars):
        raise ConfigError(f"{jars_dir} has no {wanted} (pyspark {pyspark.__version__})")
    return jars


def build_session(
    app_name: str = "rmqcompat-audit",
    master: str = "local[*]",
    *,
    ivy_dir: Path,
    jars_dir: Path | None = None,
    class_archive: ClassArchive | None = None,
    extra: Mapping[str, str] | None = None,
) -> SparkSession:
    """Get or create the SparkSession (see :func:`session_config` for the settings).

    With a ``local`` master, sets ``PYSPARK_PYTHON`` to this interpreter unless it is set.

    Raises:
        ConfigError: as :func:`session_config`.
    """
    if master.startswith("local"):
        # Local Python workers run this interpreter (its packages: fastavro, rmqcompat)
        # unless PYSPARK_PYTHON says otherwise; pyspark reads only the variable, and
        # would otherwise start whatever "python3" is first on PATH.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    config = session_config(
        master, ivy_dir=ivy_dir, jars_dir=jars_dir, class_archive=class_archive, extra=extra
    )
    for name, value in config.items():
        builder = builder.config(name, value)
    spark = builder.getOrCreate()
    if config.get("spark.jars.packages") == KAFKA_CONNECTOR:
        _record_resolution(ivy_dir, spark.sparkContext.getConf().get("spark.jars", ""))
    return spark


def stop_session(spark: SparkSession, *, jvm_exit_s: float = 120.0) -> bool:
    """Stop ``spark``, and the JVM this process started for it: it exits when its standard
    input closes (as when this process ends), writing a class archive first if it was
    asked to. Waits at most ``jvm_exit_s`` for that, then kills it.

    Returns whether the JVM exited by itself (False: killed, or not started here).
    """
    spark.stop()
    gateway = SparkContext._gateway  # noqa: SLF001 - pyspark keeps the JVM's process only there
    process = getattr(gateway, "proc", None)
    if gateway is None or process is None or process.stdin is None:
        return False
    gateway.close()
    # a later session of this process starts a JVM of its own
    SparkContext._gateway = SparkContext._jvm = None  # noqa: SLF001
    process.stdin.close()
    try:
        return bool(process.wait(jvm_exit_s) == 0)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return False
