"""The Kafka-transaction mechanics of a replay: its transactional producer, fencing, handing
a chunk's records to librdkafka, aborting, and the collector pause around it all."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from confluent_kafka import KafkaException, Producer

from rmqcompat.config import ClientConfig
from rmqcompat.core_plugin import direct_produce, with_plugin
from rmqcompat.dlq.chunk import Record
from rmqcompat.dlq.scan import REQUEST_TIMEOUT_S
from rmqcompat.producer_id import ask_for_producer_id
from rmqcompat.reachability import PROBE_TOPIC

#: Seconds a replay transaction may stay open, and a transactional call may take.
TXN_TIMEOUT_S = 30.0


def transactional_id(namespace: str, group: str) -> str:
    """The one transactional id of every replay of ``group`` in ``namespace``."""
    return f"rmqcompat-dlq-replay.{namespace}.{group}"


#: Hands a chunk's records to the replay's producer, in order (see :func:`hand_over`).
HandOver = Callable[[Sequence[Record]], None]


def replay_producer(config: ClientConfig, group: str) -> tuple[Producer, HandOver]:
    """The transactional producer of a replay of ``group`` (no I/O until used), and how
    records reach it. It has no delivery callback: a commit succeeds only if every record
    of its transaction was written, so the commit is the acknowledgement."""
    settings = config.librdkafka(
        "producer",
        **{
            "transactional.id": transactional_id(config.namespace, group),
            "acks": "all",
            "enable.idempotence": True,
            "transaction.timeout.ms": int(TXN_TIMEOUT_S * 1000),
        },
    )
    settings = with_plugin(settings)
    producer = Producer(settings)
    return producer, hand_over(producer, settings)


def hand_over(producer: Producer, settings: dict[str, Any]) -> HandOver:
    """From the compiled core (``DirectProduce``) where it took ``producer`` (created with
    ``settings``) as a librdkafka plugin; else one ``produce`` call a record
    (:func:`produce_all`, the reference)."""
    direct = direct_produce(settings)
    if direct is None:
        return partial(produce_all, producer)
    return partial(produce_directly, producer, direct)


def fence(producer: Producer) -> None:
    """Fence every older replay of the group (its open transaction is aborted)."""
    # connected first: librdkafka looks for the transaction coordinator again only after
    # 500 ms when it asked before any broker connection was up (measured: 0.5 s vs 6 ms)
    producer.list_topics(PROBE_TOPIC, timeout=REQUEST_TIMEOUT_S)
    ask_for_producer_id(producer)
    producer.init_transactions(TXN_TIMEOUT_S)


def produce_all(producer: Producer, records: Sequence[Record]) -> None:
    """Hand ``records`` to librdkafka, in order, waiting while its queue is full."""
    produce = producer.produce
    for topic, value, key, headers in records:
        while True:
            try:
                # positional (partition unassigned, no callbacks, timestamp now): parsing
                # keywords cost the binding about a fifth of the call (0.8 of 4.9 us with
                # 7 headers); the stub's header list is invariant
                produce(topic, value, key, -1, None, None, 0, headers)  # type: ignore[arg-type]
                break
            except BufferError:  # local queue full: let librdkafka send, then again
                producer.poll(0.1)


def produce_directly(producer: Producer, direct: Any, records: Sequence[Record]) -> None:
    """:func:`produce_all` through the compiled core: the records go to librdkafka without
    a Python call each (confluent-kafka's binding converts each header through Python's
    API; 1.0 against 0.6 us of CPU a record with seven headers)."""
    at = 0
    while (at := direct.produce(records, at)) < len(records):
        producer.poll(0.1)  # local queue full: let librdkafka send, then on from there


def abort_quietly(producer: Any) -> None:
    try:
        producer.abort_transaction(TXN_TIMEOUT_S)
    except KafkaException:
        pass  # fenced or fatal: the broker aborts it when the transaction times out
