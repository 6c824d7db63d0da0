"""BROADCASTING: partitions added to a subscribed topic are found and read (RocketMQ
re-balances every 20 s; here ``broadcast_rediscover_interval_s`` is short)."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import AdminClient, NewPartitions
from consumer_helpers import Recorder, create_topic, make_consumer, produce
from waiting import wait_until

from rmqcompat.consumer.listener import ConsumeFromWhere, MessageModel


def test_broadcasting_consumer_reads_partitions_added_later(
    kafka_bootstrap, client_overrides, namespace, unique_name, tmp_path, broker_kind
):
    if broker_kind == "tansu":
        pytest.skip("Tansu 0.6.0 does not support CreatePartitions")
    group, topic = unique_name("g"), unique_name("T")
    physical = create_topic(kafka_bootstrap, topic, namespace, partitions=1)
    rec = Recorder()
    consumer = make_consumer(
        kafka_bootstrap,
        client_overrides,
        namespace,
        group,
        message_model=MessageModel.BROADCASTING,
        offset_store_dir=tmp_path,
        # "last offset" applies to partitions known at start; the record below is written
        # before the next look (3 s), and a partition found later is read from its start.
        consume_from_where=ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET,
        broadcast_rediscover_interval_s=3.0,
    )
    consumer.subscribe(topic)
    consumer.register_message_listener(rec)
    with consumer:
        wait_until(lambda: (physical, 0) in consumer.stats(), what="partition 0 assigned")
        admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
        admin.create_partitions([NewPartitions(physical, 2)])[physical].result(timeout=20)
        ids = produce(kafka_bootstrap, topic, namespace, [{}], partition=1)
        wait_until(lambda: rec.ids() == ids, what="the message of the new partition")
        assert (physical, 1) in consumer.stats()
