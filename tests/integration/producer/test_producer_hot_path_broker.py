"""The send hot path against a real broker: what a kept future holds, and shutdown's wait."""

from __future__ import annotations

import gc
import threading
import weakref
from unittest import mock

from producer_helpers import by_msg_id, create_topic, read_to_eof

from rmqcompat.message import Message
from rmqcompat.producer import DefaultMQProducer, SendStatus
from rmqcompat.producer.pipeline import Pipeline
from rmqcompat.topics.naming import to_kafka_topic


def test_a_kept_future_does_not_keep_its_message_once_delivered(
    kafka_bootstrap, namespace, client_overrides, unique_name
):
    topic = unique_name("T")
    create_topic(kafka_bootstrap, topic, namespace, partitions=1)
    with DefaultMQProducer(
        "PG", kafka_bootstrap, namespace=namespace, kafka_config=client_overrides
    ) as producer:
        msg = Message(topic, b"x" * 1000)
        gone = weakref.ref(msg)
        future = producer.send_async(msg)
        del msg
        result = future.result()
    # shutdown() returned: every delivery report has run to its end
    gc.collect()
    assert gone() is None, "the delivered send still holds its message"
    assert future.result() is result and result.send_status is SendStatus.SEND_OK


def test_shutdown_waits_for_every_outcome_and_callback_of_many_async_sends(
    kafka_bootstrap, namespace, client_overrides, unique_name
):
    topic = unique_name("T")
    create_topic(kafka_bootstrap, topic, namespace, partitions=4)
    count = 3000
    fired: list[object] = []
    lock = threading.Lock()

    def callback(outcome: object) -> None:
        with lock:
            fired.append(outcome)

    producer = DefaultMQProducer(
        "PG", kafka_bootstrap, namespace=namespace, kafka_config=client_overrides
    )
    producer.start()
    futures = [
        producer.send_async(Message(topic, str(i).encode()), callback=callback)
        for i in range(count)
    ]
    producer.shutdown()
    # no waiting on any future: shutdown alone saw every outcome and callback through
    assert all(f.done() for f in futures)
    assert len(fired) == count
    results = [f.result(timeout=0) for f in futures]
    assert sorted(fired, key=id) == sorted(results, key=id)  # the very objects, once each
    landed = by_msg_id(read_to_eof(kafka_bootstrap, to_kafka_topic(topic, namespace)))
    assert sorted(landed) == sorted(r.msg_id for r in results)


def test_sends_beyond_a_full_local_queue_wait_for_room_and_land_in_order(
    kafka_bootstrap, namespace, client_overrides, unique_name
):
    # librdkafka refuses a record while its local queue is full (BufferError): the send
    # waits for room within its time and is then produced, not failed or reordered.
    topic = unique_name("T")
    create_topic(kafka_bootstrap, topic, namespace, partitions=1)
    config = {**client_overrides, "queue.buffering.max.messages": 5}
    real = Pipeline._produce_when_room
    waits = mock.patch.object(Pipeline, "_produce_when_room", autospec=True, side_effect=real)
    with DefaultMQProducer("PG", kafka_bootstrap, namespace=namespace, kafka_config=config) as p:
        p.send(Message(topic, b"first"))  # the topic is checked: the plain lane takes the rest
        with waits as waited:
            futures = [p.send_async(Message(topic, str(i).encode())) for i in range(300)]
        results = [f.result(timeout=30) for f in futures]
    assert waited.call_count > 0, "the local queue never filled: nothing was tested"
    assert all(r.send_status is SendStatus.SEND_OK for r in results)
    offsets = [r.queue_offset for r in results]
    assert offsets == sorted(offsets) and len(set(offsets)) == len(offsets)
    stored = by_msg_id(read_to_eof(kafka_bootstrap, to_kafka_topic(topic, namespace)))
    assert [stored[r.msg_id].value() for r in results] == [str(i).encode() for i in range(300)]
