"""Helpers of the push-consumer tests: raw produce/read with rmqcompat's codec, a recorder,
and ``ConsumerEnv``: one test's group and topic with a subscribed consumer on them (the
``env`` fixture of consumer_fixtures.py makes one)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from rmqcompat import properties as props
from rmqcompat.consumer.listener import ConsumeConcurrentlyStatus, ConsumeFromWhere
from rmqcompat.consumer.push_consumer import DefaultMQPushConsumer
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.naming import TRACE_TOPIC, retry_topic, to_kafka_topic
from rmqcompat.topics.provision import ensure_topics
from rmqcompat.topics.spec import TopicSpec
from rmqcompat.trace import decode_record

SHORT_LEVELS = "100ms 200ms 300ms 400ms 500ms 600ms 700ms 800ms 900ms 1s"
OK = ConsumeConcurrentlyStatus.CONSUME_SUCCESS
LATER = ConsumeConcurrentlyStatus.RECONSUME_LATER
WAIT_S = 20.0
LEVELS = DelayLevels.parse(SHORT_LEVELS)


def create_topic(
    bootstrap: str,
    topic: str,
    namespace: str,
    partitions: int = 1,
    configs: dict[str, str] | None = None,
) -> str:
    spec = TopicSpec(partitions, configs=configs or {})
    ensure_topics({"bootstrap.servers": bootstrap}, {topic: spec}, namespace)
    return to_kafka_topic(topic, namespace)


def produce(
    bootstrap: str,
    topic: str,
    namespace: str,
    messages: list[dict[str, Any]],
    partition: int = 0,
) -> list[str]:
    """Produce ``{"body", "id", "tags", "props", "raw_headers"}`` dicts; return the ids."""
    producer = Producer({"bootstrap.servers": bootstrap})
    ids = []
    for i, spec in enumerate(messages):
        msg_id = spec.get("id", f"id-{i}-{time.monotonic_ns()}")
        properties = {props.UNIQ_KEY: msg_id, **spec.get("props", {})}
        if spec.get("tags"):
            properties[props.TAGS] = spec["tags"]
        headers = spec.get("raw_headers") or props.to_headers(properties)
        producer.produce(
            to_kafka_topic(topic, namespace),
            spec.get("body", b"x"),
            headers=headers,
            partition=partition,
        )
        ids.append(msg_id)
    assert producer.flush(10) == 0
    return ids


def read_records(
    bootstrap: str,
    topic: str,
    namespace: str,
    *,
    count: int | None = None,
    min_s: float = 0.0,
    max_s: float = WAIT_S,
    committed: bool = False,
) -> list[Any]:
    """Records of ``topic`` from the start of every partition: until ``count`` were read,
    or (no ``count``) until each partition is read to the end it had when reading began
    and at least ``min_s`` passed; never longer than ``max_s``. ``committed`` reads
    read_committed (a reader stops short of an open transaction)."""
    return read_kafka_topic(
        bootstrap,
        to_kafka_topic(topic, namespace),
        count=count,
        min_s=min_s,
        max_s=max_s,
        committed=committed,
    )


def read_kafka_topic(
    bootstrap: str,
    physical: str,
    *,
    count: int | None = None,
    min_s: float = 0.0,
    max_s: float = WAIT_S,
    committed: bool = False,
) -> list[Any]:
    """:func:`read_records` of a Kafka topic named as it is on the broker (a topic with no
    RocketMQ name, such as ``<namespace>.rmq.trace``): assigned, no group joined."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "reader",
            "enable.auto.commit": False,
            "isolation.level": "read_committed" if committed else "read_uncommitted",
            # the first fetch must not wait out the broker's 500 ms default on an empty
            # partition that happened to become fetchable before the others
            "fetch.wait.max.ms": 10,
        }
    )
    try:
        parts = consumer.list_topics(physical, timeout=10).topics[physical].partitions
        tps = [TopicPartition(physical, p) for p in parts]
        ends = {tp.partition: _end_offset(consumer, tp) for tp in tps}
        consumer.assign([TopicPartition(physical, p, -2) for p in parts])
        out: list[Any] = []
        started = time.monotonic()
        while time.monotonic() - started < max_s:
            out += [r for r in consumer.consume(100, 0.05) if r.error() is None]
            if count is not None:
                if len(out) >= count:
                    break
            elif time.monotonic() - started >= min_s and all(
                ends[tp.partition] == 0 or tp.offset >= ends[tp.partition]
                for tp in consumer.position(tps)
            ):
                break
        return out
    finally:
        consumer.close()


def _end_offset(consumer: Consumer, tp: TopicPartition, timeout: float = 10.0) -> int:
    """The high watermark of ``tp``; a topic created a moment ago has no leader yet."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return int(consumer.get_watermark_offsets(tp, timeout=timeout, cached=False)[1])
        except KafkaException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def trace_events(
    bootstrap: str, namespace: str, enough: Callable[[list[dict[str, Any]]], bool]
) -> list[dict[str, Any]]:
    """The namespace's trace events, read from the start of every partition until
    ``enough(events)`` (30 s at most). Assigned, not subscribed: no group to join."""
    physical = to_kafka_topic(TRACE_TOPIC, namespace)
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "trace-check",
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 10,
        }
    )
    events: list[dict[str, Any]] = []
    deadline = time.monotonic() + 30
    try:
        parts: list[int] = []
        while not parts and time.monotonic() < deadline:  # the sink may still create it
            topic = consumer.list_topics(physical, timeout=10).topics.get(physical)
            parts = list(topic.partitions) if topic is not None and topic.error is None else []
            if not parts:
                time.sleep(0.2)
        consumer.assign([TopicPartition(physical, p, -2) for p in parts])
        while time.monotonic() < deadline and not enough(events):
            for record in consumer.consume(100, 0.2):
                if record.error() is None:
                    events.extend(decode_record(record.value() or b""))
        return events
    finally:
        consumer.close()


def read_topic(
    bootstrap: str, topic: str, namespace: str, count: int, timeout: float = WAIT_S
) -> list[tuple[dict[str, str], bytes]]:
    """Read ``count`` records from the start of every partition (or what came by timeout)."""
    records = read_records(bootstrap, topic, namespace, count=count, max_s=timeout)
    return [(_lenient(r.headers()), r.value() or b"") for r in records]


def _lenient(headers: list | None) -> dict[str, str]:
    """Headers as text; poison bytes are replaced rather than raising (quarantine reads)."""
    return {name: (value or b"").decode("utf-8", "replace") for name, value in headers or ()}


def read_all(bootstrap: str, topic: str, namespace: str, settle: float = 1.0) -> list:
    """Everything in the topic: read for ``settle`` seconds and at least to the end every
    partition had when reading began."""
    records = read_records(bootstrap, topic, namespace, min_s=settle)
    return [(_lenient(r.headers()), r.value() or b"") for r in records]


def committed(bootstrap: str, group_id: str, physical: str, partition: int = 0) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group_id})
    try:
        return consumer.committed([TopicPartition(physical, partition)], timeout=10)[0].offset
    finally:
        consumer.close()


@dataclass
class Recorder:
    """A listener recording every delivery; ``behave(msgs, ctx)`` returns the status."""

    behave: Callable[[list, Any], Any] = lambda msgs, ctx: OK
    deliveries: list = field(default_factory=list)
    batches: list = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, msgs: list, ctx: Any) -> Any:
        with self.lock:
            self.batches.append([m.msg_id for m in msgs])
            self.deliveries += [(m.msg_id, m.topic, m.reconsume_times, m) for m in msgs]
        return self.behave(msgs, ctx)

    def ids(self) -> list[str]:
        with self.lock:
            return [d[0] for d in self.deliveries]


def make_consumer(
    bootstrap: str, overrides: dict, namespace: str, group: str, **settings: Any
) -> DefaultMQPushConsumer:
    settings.setdefault("message_delay_level", SHORT_LEVELS)
    settings.setdefault("consume_from_where", ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET)
    settings.setdefault("persist_consumer_offset_interval", 0.2)
    settings.setdefault("consume_thread_max", 4)
    return DefaultMQPushConsumer(
        group, bootstrap_servers=bootstrap, namespace=namespace, kafka_config=overrides, **settings
    )


class ConsumerEnv(NamedTuple):
    """One test's broker, client overrides, namespace, group and topic, with the usual steps
    on them; unpacks as ``bootstrap, overrides, ns, group, topic``."""

    bootstrap: str
    overrides: dict
    ns: str
    group: str
    topic: str

    def consumer(
        self, listener: Any, expression: str = "*", **settings: Any
    ) -> DefaultMQPushConsumer:
        """A consumer of ``group`` on ``topic`` (tags ``expression``) with ``listener``; not
        started: ``with env.consumer(...) as consumer:`` runs it."""
        consumer = make_consumer(self.bootstrap, self.overrides, self.ns, self.group, **settings)
        consumer.subscribe(self.topic, expression)
        consumer.register_message_listener(listener)
        return consumer

    def produce(self, messages: list[dict[str, Any]], topic: str | None = None) -> list[str]:
        """``produce`` into partition 0 of ``topic`` (default: this topic); the ids."""
        return produce(self.bootstrap, topic or self.topic, self.ns, messages)

    def create_retry_topic(self) -> str:
        """Create the group's ``%RETRY%`` topic (to put messages in it); its logical name."""
        create_topic(self.bootstrap, retry_topic(self.group), self.ns)
        return retry_topic(self.group)

    def offset(self, topic: str | None = None) -> int:
        """The group's committed offset on partition 0 of ``topic`` (default: this topic)."""
        return committed(self.bootstrap, f"{self.ns}%{self.group}", self.physical(topic))

    def physical(self, topic: str | None = None) -> str:
        return to_kafka_topic(topic or self.topic, self.ns)

    def read(self, topic: str, count: int, timeout: float = WAIT_S) -> list:
        return read_topic(self.bootstrap, topic, self.ns, count, timeout)

    def read_all(self, topic: str, settle: float = 1.0) -> list:
        return read_all(self.bootstrap, topic, self.ns, settle)


def new_env(
    bootstrap: str,
    overrides: dict,
    namespace: str,
    unique_name: Callable[[str], str],
    configs: dict[str, str] | None = None,
) -> ConsumerEnv:
    """A fresh group and a created one-partition topic (with topic ``configs``)."""
    group, topic = unique_name("g"), unique_name("T")
    create_topic(bootstrap, topic, namespace, configs=configs)
    return ConsumerEnv(bootstrap, overrides, namespace, group, topic)
