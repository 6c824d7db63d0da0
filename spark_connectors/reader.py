"""A configured reader of Spark's built-in ``kafka`` source for logical topic names."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pyspark.sql import DataFrameReader, SparkSession
from pyspark.sql.streaming.readwriter import DataStreamReader

from rmqcompat.errors import ConfigError
from rmqcompat.topics.naming import to_kafka_topic


def kafka_options(
    bootstrap_servers: str,
    topics: Iterable[str],
    namespace: str = "",
    *,
    starting_offsets: str = "earliest",
    ending_offsets: str | None = "latest",
    kafka: Mapping[str, str] | None = None,
    min_partitions: int | None = None,
) -> dict[str, str]:
    """Options of Spark's ``kafka`` source for the physical names of ``topics``.

    Args:
        topics: logical (RocketMQ) names, e.g. ``Orders``, ``%DLQ%G``,
            ``RMQ_SYS_TRACE_TOPIC``; mapped with :func:`to_kafka_topic`.
        starting_offsets / ending_offsets: Spark's ``startingOffsets`` /
            ``endingOffsets`` (``earliest``, ``latest`` or its JSON); ``ending_offsets``
            must be None for a stream.
        kafka: Kafka (Java) client settings passed through, e.g. ``security.protocol``,
            ``sasl.mechanism``, ``sasl.jaas.config``; ``kafka.`` is prefixed if missing.
        min_partitions: Spark's ``minPartitions`` (split Kafka partitions into more tasks).

    Raises:
        InvalidNameError: a topic or the namespace is not a legal name.
        ConfigError: no topic given, or a passthrough setting overrides the topic choice.
    """
    physical = sorted({to_kafka_topic(topic, namespace) for topic in topics})
    if not physical:
        raise ConfigError("kafka_options needs at least one topic")
    options = {
        "kafka.bootstrap.servers": bootstrap_servers,
        "subscribe": ",".join(physical),
        "startingOffsets": starting_offsets,
        "includeHeaders": "true",
        "failOnDataLoss": "false",
    }
    if ending_offsets is not None:
        options["endingOffsets"] = ending_offsets
    if min_partitions is not None:
        options["minPartitions"] = str(min_partitions)
    for name, value in (kafka or {}).items():
        key = name if name.startswith("kafka.") else f"kafka.{name}"
        if key in ("kafka.subscribe", "kafka.assign", "kafka.subscribePattern"):
            raise ConfigError(f"{name} is chosen by the topics argument, not passed through")
        options[key] = value
    return options


def kafka_reader(
    spark: SparkSession,
    bootstrap_servers: str,
    topics: Iterable[str],
    namespace: str = "",
    *,
    stream: bool = False,
    starting_offsets: str = "earliest",
    ending_offsets: str | None = "latest",
    kafka: Mapping[str, str] | None = None,
    min_partitions: int | None = None,
) -> DataFrameReader | DataStreamReader:
    """``spark.read`` (or, with ``stream``, ``spark.readStream``) of the ``kafka`` format
    for the logical ``topics``; call ``.load()`` on it. Arguments as :func:`kafka_options`
    (a stream has no ending offsets: ``ending_offsets`` is ignored there).

    Raises:
        InvalidNameError, ConfigError: as :func:`kafka_options`.
    """
    options = kafka_options(
        bootstrap_servers,
        topics,
        namespace,
        starting_offsets=starting_offsets,
        ending_offsets=None if stream else ending_offsets,
        kafka=kafka,
        min_partitions=min_partitions,
    )
    reader = spark.readStream if stream else spark.read
    return reader.format("kafka").options(**options)
