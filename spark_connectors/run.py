"""An audit from start to end, as the ``rmqcompat audit`` command runs it: check that the
namespace was traced, get a Spark session, run the batch or streaming job, stop what was
started here.

A local Spark started here maps the cached class archive of Spark's classes, or writes it
as its JVM exits (:mod:`.class_archive`). A session already running in this process (a
notebook's) is used as it is and left running.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from py4j.protocol import Py4JError  # type: ignore[import-untyped]
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from rmqcompat.cache import cache_root
from rmqcompat.config import ClientConfig
from rmqcompat.errors import AuditError, TopologyError
from rmqcompat.reachability import cluster_metadata
from rmqcompat.spark.class_archive import ClassArchive
from rmqcompat.spark.job import AuditJob, run_batch, run_stream
from rmqcompat.spark.session import build_session, stop_session
from rmqcompat.topics.naming import TRACE_TOPIC, to_kafka_topic

Report = dict[str, Any]


@dataclass(frozen=True)
class SparkOptions:
    """The Spark session an audit starts when none runs in this process.

    Attributes:
        master: Spark's master URL (``local[*]``, ``spark://...``).
        jars_dir: resolved connector jars for offline use (None: from Maven Central).
        conf: further Spark settings.
        quiet: switch Spark's own log off (an audit's failure is reported in one line).
    """

    master: str = "local[*]"
    jars_dir: Path | None = None
    conf: Mapping[str, str] = field(default_factory=dict)
    quiet: bool = True


@dataclass(frozen=True)
class StreamOptions:
    """A streaming audit: its checkpoint, and how often it triggers (None: once, what the
    topic holds now)."""

    checkpoint: Path
    trigger_interval: str | None = None


def run_audit(
    job: AuditJob,
    out: Path,
    spark: SparkOptions,
    *,
    stream: StreamOptions | None = None,
    on_report: Callable[[Report], None] = lambda _report: None,
    notice: Callable[[str], None] = lambda _text: None,
) -> Report | None:
    """Run ``job`` into ``out``; ``on_report`` gets the report before Spark stops (stopping
    a JVM that writes its class archive takes a while), ``notice`` what the user waits for.

    Returns the report (None for a stream that ran until stopped).

    Raises:
        ConfigError / BrokerUnreachableError: the broker did not answer.
        TopologyError: the namespace has no trace topic (nothing was traced).
        AuditError: Spark did not start, or the job failed (the Java exception's own text,
            without its stack trace).
    """
    require_trace_topic(job.client)
    with audit_session(spark, notice) as session:
        try:
            if stream is None:
                report: Report | None = run_batch(session, job, out)
            else:
                report = run_stream(session, job, out, stream.checkpoint, stream.trigger_interval)
        except (PySparkException, Py4JError) as exc:
            raise AuditError(f"the Spark audit failed: {spark_reason(exc)}") from exc
        if report is not None:
            on_report(report)
    return report


@contextlib.contextmanager
def audit_session(
    options: SparkOptions, notice: Callable[[str], None] = lambda _text: None
) -> Iterator[SparkSession]:
    """The session an audit runs in: the one running in this process, else a new one
    (with the class archive where the master is local), stopped at the end.

    Raises:
        AuditError: Spark did not start.
    """
    running = SparkSession.getActiveSession()  # e.g. a notebook's: used, not stopped
    if running is not None:
        yield running
        return
    archive = ClassArchive.in_directory(cache_root() / "spark-classes")
    try:
        spark = build_session(
            master=options.master,
            ivy_dir=cache_root() / "ivy",
            jars_dir=options.jars_dir,
            class_archive=archive,
            extra=options.conf,
        )
    except (PySparkException, Py4JError) as exc:
        raise AuditError(f"Spark did not start: {spark_reason(exc)}") from exc
    if options.quiet:
        spark.sparkContext.setLogLevel("OFF")
    java_options = spark.sparkContext.getConf().get("spark.driver.extraJavaOptions", "")
    writing = archive is not None and archive.written_by(java_options or "")
    try:
        yield spark
    finally:
        if writing:
            notice("saving Spark's classes for faster audits (once)")
        exited = stop_session(spark)
        if archive is not None and writing and not (exited and archive.publish()):
            archive.discard()


def require_trace_topic(client: ClientConfig) -> None:
    """Refuse, before Spark starts, an audit of a namespace with no trace topic (Spark's
    ``kafka`` source would fail on it with a Java stack trace).

    Raises:
        ConfigError / BrokerUnreachableError: as :func:`cluster_metadata`.
        TopologyError: the namespace's trace topic does not exist.
    """
    physical = to_kafka_topic(TRACE_TOPIC, client.namespace)
    # every topic listed, none named: a broker may create a topic a request names
    metadata = cluster_metadata(client).topics.get(physical)
    if metadata is None or metadata.error is not None:
        raise TopologyError(
            f"no trace topic {physical} at {client.bootstrap_servers}: nothing has been"
            f" traced in namespace {client.namespace!r} (clients create it when they first"
            " trace; so does `rmqcompat topics create`)"
        )


def spark_reason(exc: Exception) -> str:
    """What a Spark error says, without the JVM's stack trace: the Java exception's own
    text for an error raised in the JVM, else the error's first line."""
    java = getattr(exc, "java_exception", None)
    text = str(java.toString()) if java is not None else str(exc)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__
