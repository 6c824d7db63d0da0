"""The compiled core's direct produce (``produce_directly`` of ``rmqcompat.dlq.transactions``)
against its reference, confluent-kafka's positional ``produce`` (``produce_all``): the same
records give the same messages on the broker, whether a list of tuples or the
``ReplayRecords`` the core's ``replay_records`` builds; a full local queue is waited out,
in order; what ``produce`` refuses is refused alike, after the records before it went."""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from consumer_helpers import create_topic, read_kafka_topic
from unit_fakes import SEND_BACK_HEADERS

from rmqcompat import properties as props
from rmqcompat.core import CORE
from rmqcompat.core_plugin import direct_produce, with_plugin
from rmqcompat.dlq.model import DeadLetter
from rmqcompat.dlq.republish import replay_stamp
from rmqcompat.dlq.transactions import produce_all, produce_directly
from rmqcompat.topics.naming import retry_topic

pytestmark = pytest.mark.skipif(CORE is None, reason="the direct produce is the compiled core's")


def records(topic: str) -> list[Any]:
    """Every shape ``produce`` takes: no value or key, empty ones, text ones, headers as a
    list with a None value, a repeated name, names that are not text (``produce`` names them
    by ``str()``) and bytes not UTF-8, as a dict, none at all; a value over 64 kB."""
    return [
        (topic, b"v", b"k", [("A", b"1"), ("B", None)]),
        (topic, None, None, []),
        (topic, b"", b"", None),
        (topic, "text", "key", [("A", "text"), ("A", b"again"), (b"raw", b"\xff\x00"), (5, b"")]),
        (topic, b"x" * 70_000, None, {"D": b"from a dict", "\u00fc": b""}),
    ]


def shape(record: Any) -> tuple:
    return (record.key(), record.value(), record.headers(), record.partition())


def new_producer(bootstrap: str, **more: Any) -> tuple[Producer, Any]:
    settings = with_plugin(
        {"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5, **more}
    )
    producer = Producer(settings)
    direct = direct_produce(settings)
    assert direct is not None, "the core did not take the producer as a plugin"
    return producer, direct


def test_the_same_records_are_the_same_messages_both_ways(kafka_bootstrap, namespace):
    reference = create_topic(kafka_bootstrap, "reference", namespace)
    direct_topic = create_topic(kafka_bootstrap, "direct", namespace)
    producer, direct = new_producer(kafka_bootstrap)
    produce_all(producer, records(reference))
    produce_directly(producer, direct, records(direct_topic))
    assert producer.flush(30) == 0
    count = len(records(""))
    expected = [shape(r) for r in read_kafka_topic(kafka_bootstrap, reference, count=count)]
    got = [shape(r) for r in read_kafka_topic(kafka_bootstrap, direct_topic, count=count)]
    assert len(expected) == count
    assert got == expected


def letters() -> list[DeadLetter]:
    """Dead letters the core builds the records of itself (a send-back's, one without
    ``ORIGIN_MESSAGE_ID``) and one it leaves to the Python rule (no ``BORN_TIMESTAMP``)."""
    send_back = [*SEND_BACK_HEADERS, ("user", None)]
    no_origin = [h for h in send_back if h[0] != props.ORIGIN_MESSAGE_ID]
    no_born = [h for h in send_back if h[0] != props.BORN_TIMESTAMP]
    chosen = [send_back, no_origin, no_born]
    return [
        DeadLetter("G", "ns.rmq.dlq.G", 0, at, 9, b"body", b"k", tuple(headers))
        for at, headers in enumerate(chosen)
    ]


def test_a_replays_records_are_the_same_messages_as_their_tuples(kafka_bootstrap, namespace):
    reference_ns, direct_ns = f"{namespace}r", f"{namespace}d"
    made = []
    for ns in (reference_ns, direct_ns):
        create_topic(kafka_bootstrap, retry_topic("G"), ns)
        pending = [(letter, retry_topic("G"), 0) for letter in letters()]
        ids = [f"NEW{i}" for i in range(len(pending))]
        made.append(CORE.replay_records(pending, ids, "G", ns, "retry", replay_stamp(77))[0])
    reference, built = made
    assert type(built).__name__ == "ReplayRecords"
    producer, direct = new_producer(kafka_bootstrap)
    produce_all(producer, reference)  # iterated as the sequence of tuples it is
    produce_directly(producer, direct, built)
    assert producer.flush(30) == 0
    read = [
        [shape(r) for r in read_kafka_topic(kafka_bootstrap, records[0][0], count=3)]
        for records in made
    ]
    assert len(read[0]) == 3
    assert read[1] == read[0]


def test_a_full_queue_is_waited_out_in_order(kafka_bootstrap, namespace):
    topic = create_topic(kafka_bootstrap, "full", namespace)
    producer, direct = new_producer(kafka_bootstrap, **{"queue.buffering.max.messages": 3})
    many = [(topic, str(i).encode(), None, [("N", str(i).encode())]) for i in range(300)]
    first = direct.produce(many, 0)
    assert 0 < first < len(many)  # the queue filled: the rest waits for the caller's poll
    produce_directly(producer, direct, many[first:])
    assert producer.flush(30) == 0
    read = read_kafka_topic(kafka_bootstrap, topic, count=len(many))
    assert [r.value() for r in read] == [str(i).encode() for i in range(300)]


@pytest.mark.parametrize(
    "bad",
    [
        ("T", b"v", None, [("A",)]),
        ("T", b"v", None, [("A", 5)]),
        ("T", b"v", None, "A=v"),
        ("T", 5, None, None),
        (b"T", b"v", None, None),
    ],
    ids=[
        "header-not-a-pair",
        "header-value-int",
        "headers-text",
        "value-int",
        "topic-bytes",
    ],
)
def test_a_record_of_another_shape_is_a_type_error_both_ways(kafka_bootstrap, namespace, bad):
    topic = create_topic(kafka_bootstrap, "shapes", namespace)
    producer, direct = new_producer(kafka_bootstrap)
    with pytest.raises(TypeError):
        produce_all(producer, [bad])
    good = (topic, b"before", None, None)
    with pytest.raises(TypeError):
        produce_directly(producer, direct, [good, bad])
    assert producer.flush(30) == 0
    assert [r.value() for r in read_kafka_topic(kafka_bootstrap, topic, count=1)] == [b"before"]


def test_a_refusal_of_librdkafka_raises_as_produce_raises(kafka_bootstrap, namespace):
    topic = create_topic(kafka_bootstrap, "refused", namespace)
    producer, direct = new_producer(kafka_bootstrap, **{"message.max.bytes": 2000})
    too_large = (topic, b"x" * 5000, None, None)
    with pytest.raises(KafkaException) as reference:
        produce_all(producer, [too_large])
    with pytest.raises(KafkaException) as got:
        produce_directly(producer, direct, [too_large])
    assert got.value.args[0].code() == reference.value.args[0].code()
    assert got.value.args[0].code() == KafkaError.MSG_SIZE_TOO_LARGE
