"""A SparkSession with Spark's Kafka source on its class path.

The connector ``org.apache.spark:spark-sql-kafka-0-10_2.13`` must match the installed
pyspark exactly; it is resolved from Maven Central through ``spark.jars.packages`` into
an Ivy cache (``<rmqcompat cache>/ivy``), or taken from a directory of resolved jars
(offline use: copy ``<cache>/ivy/jars`` to the machine and pass it as ``jars_dir``).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path

import pyspark
from pyspark.sql import SparkSession

from rmqcompat.errors import ConfigError

KAFKA_CONNECTOR = f"org.apache.spark:spark-sql-kafka-0-10_2.13:{pyspark.__version__}"


def session_config(
    master: str = "local[*]",
    *,
    ivy_dir: Path,
    jars_dir: Path | None = None,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The Spark settings :func:`build_session` applies (``extra`` wins).

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
        "spark.sql.shuffle.partitions": str(_local_cores(master) or 4),
        # trace records decoded per Python call (Spark's default: 10,000)
        "spark.sql.execution.arrow.maxRecordsPerBatch": "50000",
    }
    if master.startswith("local"):
        # workers without the working directory first on their path, where a source
        # checkout's rmqcompat/ folder would hide the installed package's rmqcompat.spark
        config["spark.executorEnv.PYTHONSAFEPATH"] = "1"
    if jars_dir is None:
        config["spark.jars.packages"] = KAFKA_CONNECTOR
        config["spark.jars.ivy"] = str(ivy_dir)
    else:
        config["spark.jars"] = ",".join(str(jar) for jar in _connector_jars(jars_dir))
    config.update(extra or {})
    return config


def _local_cores(master: str) -> int | None:
    """The worker threads of a ``local``, ``local[N]`` or ``local[*]`` master (None for
    any other master: a cluster sizes its own shuffles)."""
    match = re.fullmatch(r"local(?:\[(\d+|\*)(?:,\s*\d+)?\])?", master)
    if match is None:
        return None
    threads = match.group(1)
    if threads is None:  # "local": one thread
        return 1
    return os.cpu_count() or 1 if threads == "*" else int(threads)


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
    for name, value in session_config(
        master, ivy_dir=ivy_dir, jars_dir=jars_dir, extra=extra
    ).items():
        builder = builder.config(name, value)
    return builder.getOrCreate()
