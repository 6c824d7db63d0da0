"""Consumer lag of a group on a topic, from the group's committed offsets (not Spark)."""

from __future__ import annotations

from collections.abc import Iterable

from confluent_kafka import Consumer, TopicPartition

from rmqcompat.config import ClientConfig
from rmqcompat.topics.naming import kafka_group_id, to_kafka_topic

_TIMEOUT_S = 10.0


def consumer_lag(
    client: ClientConfig, pairs: Iterable[tuple[str, str]]
) -> dict[tuple[str, str], int]:
    """Per (group, logical topic): records not yet committed by the group, summed over
    the topic's partitions (a partition without a committed offset counts from its log
    start). Pairs whose topic no longer exists are left out.

    Raises:
        KafkaException: the broker did not answer within 10 s.
    """
    lag: dict[tuple[str, str], int] = {}
    for group, topic in sorted(set(pairs)):
        group_id = kafka_group_id(group, client.namespace)
        consumer = Consumer(
            client.librdkafka("consumer", **{"group.id": group_id, "enable.auto.commit": False})
        )
        try:
            total = _topic_lag(consumer, to_kafka_topic(topic, client.namespace))
        finally:
            consumer.close()
        if total is not None:
            lag[(group, topic)] = total
    return lag


def _topic_lag(consumer: Consumer, physical: str) -> int | None:
    metadata = consumer.list_topics(physical, timeout=_TIMEOUT_S).topics.get(physical)
    if metadata is None or metadata.error is not None:
        return None
    wanted = [TopicPartition(physical, partition) for partition in metadata.partitions]
    total = 0
    for committed in consumer.committed(wanted, timeout=_TIMEOUT_S):
        low, high = consumer.get_watermark_offsets(committed, timeout=_TIMEOUT_S)
        start = committed.offset if committed.offset >= 0 else low
        total += max(high - start, 0)
    return total
