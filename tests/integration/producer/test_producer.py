"""DefaultMQProducer against a real broker: what lands where, with which headers."""

from __future__ import annotations

import threading
import time

import pytest
from producer_helpers import by_msg_id, create_topic, headers_of, read_to_eof

from rmqcompat import properties as props
from rmqcompat.errors import FatalSendError
from rmqcompat.message import Message
from rmqcompat.producer import DefaultMQProducer, SendStatus
from rmqcompat.topics.naming import to_kafka_topic
from rmqcompat.wire import offset_message_id

LEVELS = "1s 2s 3s"


@pytest.fixture
def topic(kafka_bootstrap, namespace, unique_name) -> str:
    name = unique_name("T")
    create_topic(kafka_bootstrap, name, namespace, partitions=4)
    return name


@pytest.fixture
def producer(kafka_bootstrap, namespace, client_overrides):
    with DefaultMQProducer(
        "PG",
        kafka_bootstrap,
        namespace=namespace,
        message_delay_level=LEVELS,
        kafka_config=client_overrides,
    ) as p:
        yield p


def test_sync_send_lands_where_the_result_says_with_every_header(
    producer, topic, kafka_bootstrap, namespace
):
    msg = Message(topic, b"hello", tags="TagA", keys=["k1", "k2"], flag=3, properties={"u": "v"})
    result = producer.send(msg)
    physical = to_kafka_topic(topic, namespace)
    assert result.send_status is SendStatus.SEND_OK
    assert result.message_queue.topic == topic
    [record] = read_to_eof(kafka_bootstrap, physical)
    assert (record.partition(), record.offset()) == (
        result.message_queue.queue_id,
        result.queue_offset,
    )
    assert result.offset_msg_id == offset_message_id(physical, record.partition(), record.offset())
    assert record.value() == b"hello"
    assert record.key() is None
    headers = headers_of(record)
    assert int(headers.pop(props.BORN_TIMESTAMP)) > 0
    assert headers == {
        "u": "v",
        props.TAGS: "TagA",
        props.KEYS: "k1 k2",
        props.FLAG: "3",
        props.UNIQ_KEY: result.msg_id,
    }


def test_async_sends_fire_each_callback_once_and_all_land(
    producer, topic, kafka_bootstrap, namespace
):
    outcomes: dict[int, list[object]] = {i: [] for i in range(50)}
    lock = threading.Lock()

    def recorder(i: int):
        def callback(outcome: object) -> None:
            with lock:
                outcomes[i].append(outcome)

        return callback

    futures = [
        producer.send_async(Message(topic, f"m{i}".encode()), callback=recorder(i))
        for i in range(50)
    ]
    results = [f.result() for f in futures]
    producer.shutdown()  # the future may complete before the callback chained to it ran
    assert all(len(fired) == 1 for fired in outcomes.values())
    assert [outcomes[i][0] for i in range(50)] == results
    landed = by_msg_id(read_to_eof(kafka_bootstrap, to_kafka_topic(topic, namespace)))
    assert sorted(landed) == sorted(r.msg_id for r in results)
    for i, result in enumerate(results):
        record = landed[result.msg_id]
        assert record.value() == f"m{i}".encode()
        assert (record.partition(), record.offset()) == (
            result.message_queue.queue_id,
            result.queue_offset,
        )


def test_oneway_send_lands(producer, topic, kafka_bootstrap, namespace):
    producer.send_oneway(Message(topic, b"fire-and-forget", tags="O"))
    producer.shutdown()  # waits for the outcome of everything pending
    [record] = read_to_eof(kafka_bootstrap, to_kafka_topic(topic, namespace))
    assert record.value() == b"fire-and-forget"
    assert headers_of(record)[props.TAGS] == "O"


def test_orderly_sends_keep_each_key_on_one_partition_in_order(
    producer, topic, kafka_bootstrap, namespace
):
    keys = [f"order-{k}" for k in range(8)]
    sent: dict[str, list] = {key: [] for key in keys}
    for i in range(5):
        for key in keys:
            if key == keys[0]:
                result = producer.send(Message(topic, f"{key}:{i}".encode()), sharding_key=key)
            else:
                result = producer.send_orderly(Message(topic, f"{key}:{i}".encode()), key)
            sent[key].append(result)
    records = read_to_eof(kafka_bootstrap, to_kafka_topic(topic, namespace))
    for key in keys:
        partitions = {r.message_queue.queue_id for r in sent[key]}
        assert len(partitions) == 1, f"{key} spread over {partitions}"
        mine = [r for r in records if r.key() == key.encode()]
        assert [r.value() for r in sorted(mine, key=lambda r: r.offset())] == [
            f"{key}:{i}".encode() for i in range(5)
        ]
    # 8 keys over 4 partitions: the key, not chance, decides (more than one partition used)
    assert len({r.partition() for r in records}) > 1


def test_delayed_send_is_parked_on_its_level_topic_with_due_time_and_real_topic(
    kafka_bootstrap, namespace, client_overrides, topic
):
    fixed_now = 1_800_000_000_000
    with DefaultMQProducer(
        "PG",
        kafka_bootstrap,
        namespace=namespace,
        message_delay_level=LEVELS,
        kafka_config=client_overrides,
        clock_ms=lambda: fixed_now,
    ) as producer:
        result = producer.send(Message(topic, b"later", tags="D", delay_time_level=2))
        timer = producer.send(Message(topic, b"timer", deliver_time_ms=fixed_now + 2500))
    level_topic = to_kafka_topic("%SCHEDULE%2s", namespace)
    assert result.message_queue.topic == "%SCHEDULE%2s"
    assert timer.message_queue.topic == "%SCHEDULE%2s"  # the largest level within 2.5 s
    parked = by_msg_id(read_to_eof(kafka_bootstrap, level_topic))
    headers = headers_of(parked[result.msg_id])
    assert parked[result.msg_id].value() == b"later"
    assert headers[props.REAL_TOPIC] == topic
    assert headers[props.DELAY] == "2"
    assert headers[props.DUE_TIME] == str(fixed_now + 2000)
    assert headers[props.TAGS] == "D"
    assert headers[props.BORN_TIMESTAMP] == str(fixed_now)
    timer_headers = headers_of(parked[timer.msg_id])
    assert timer_headers[props.TIMER_DELIVER_MS] == str(fixed_now + 2500)
    assert timer_headers[props.DUE_TIME] == str(fixed_now + 2000)
    # nothing reached the business topic yet: the forwarder releases it when due
    assert read_to_eof(kafka_bootstrap, to_kafka_topic(topic, namespace)) == []


def test_level_topics_are_created_by_the_producer_with_the_delay_spec(
    producer, topic, kafka_bootstrap, namespace
):
    producer.send(Message(topic, b"x", delay_time_level=3))
    physical = to_kafka_topic("%SCHEDULE%3s", namespace)
    metadata = producer_metadata(kafka_bootstrap, physical)
    assert len(metadata.partitions) == 4  # TopologySpec().delay


def producer_metadata(bootstrap: str, physical: str):
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).topics[physical]


def test_missing_business_topic_is_a_fatal_error_when_the_broker_may_not_create_it(
    kafka_bootstrap, namespace, client_overrides, unique_name
):
    # Whether a missing topic appears is the broker's policy, as for any Kafka producer;
    # when it may not, the send fails at once (RocketMQ: "no route info"), message intact.
    config = {**client_overrides, "allow.auto.create.topics": False}
    msg = Message(unique_name("Missing"), b"x")
    with DefaultMQProducer("PG", kafka_bootstrap, namespace=namespace, kafka_config=config) as p:
        with pytest.raises(FatalSendError) as info:
            p.send(msg)
        future = p.send_async(msg)
        assert isinstance(future.exception(), FatalSendError)
    assert info.value.code == "UNKNOWN_TOPIC_OR_PART"
    assert info.value.message is msg
    assert info.value.attempts == 0


@pytest.mark.parametrize(
    "schedule", [{"delay_time_level": 1}, {"deliver_time_ms": int(time.time() * 1000) + 60_000}]
)
def test_scheduled_send_to_a_missing_topic_fails_like_a_plain_send(
    schedule, kafka_bootstrap, namespace, client_overrides, unique_name
):
    # Parking it would report SEND_OK and leave the forwarder a record it cannot deliver.
    config = {**client_overrides, "allow.auto.create.topics": False}
    msg = Message(unique_name("Missing"), b"later", **schedule)
    with DefaultMQProducer(
        "PG", kafka_bootstrap, namespace=namespace, message_delay_level=LEVELS, kafka_config=config
    ) as p:
        with pytest.raises(FatalSendError) as info:
            p.send(msg)
    assert info.value.code == "UNKNOWN_TOPIC_OR_PART"
    assert info.value.message is msg
    assert info.value.attempts == 0


def test_a_sync_send_goes_at_once_while_an_earlier_async_send_still_lingers(
    kafka_bootstrap, namespace, client_overrides, topic
):
    # linger.ms 2500 holds the async record in its batch; the sync send must not wait for
    # it (nor the linger): it is stored while the async one is still lingering.
    with DefaultMQProducer(
        "PG",
        kafka_bootstrap,
        namespace=namespace,
        kafka_config={**client_overrides, "linger.ms": 2500},
        send_msg_timeout=10_000,
        trace_enabled=False,
    ) as producer:
        producer.send(Message(topic, b"warm-up"))  # metadata outside the comparison
        lingering = producer.send_async(Message(topic, b"async"))
        result = producer.send(Message(topic, b"sync"))
        assert result.send_status is SendStatus.SEND_OK
        assert not lingering.done()
        assert lingering.result(timeout=10).send_status is SendStatus.SEND_OK


def test_sync_senders_on_many_threads_each_keep_their_order(
    producer, one_queue_topic, kafka_bootstrap, namespace
):
    name = one_queue_topic

    def sender(thread_no: int) -> None:
        for seq in range(50):
            producer.send(Message(name, b"%d:%d" % (thread_no, seq)))

    threads = [threading.Thread(target=sender, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    records = read_to_eof(kafka_bootstrap, to_kafka_topic(name, namespace))
    assert len(records) == 400
    per_thread: dict[bytes, list[int]] = {}
    for record in records:
        thread_no, seq = record.value().split(b":")
        per_thread.setdefault(thread_no, []).append(int(seq))
    assert per_thread == {b"%d" % n: list(range(50)) for n in range(8)}
