"""How the poll thread gets its records: confluent-kafka's ``consume()``, or, with the
compiled core, from librdkafka directly (``DirectFetch``, ``native/src/direct_fetch.rs``).

confluent-kafka builds a ``Message``, its topic's text and a list of header tuples for
each record, which the intake reads once and frees; the direct fetch hands the intake a
batch of records copied out of librdkafka, from which the compiled intake builds the
listener's messages without a record object each. The consumer stays confluent-kafka's:
the group, the rebalance callbacks, commits, pauses and seeks are its, and each round
still serves its queue (``consume(n, 0)``), which keeps the group's events and the records
of any partition not routed to the direct fetch.
A partition is routed before it is assigned (:meth:`DirectFetcher.route`), so each of its
records comes from one of the two queues, in order.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, Protocol

from confluent_kafka import Consumer, TopicPartition

from rmqcompat.core_plugin import direct_fetch, plugin_token
from rmqcompat.fetch import fetch
from rmqcompat.wire import Fetched

_log = logging.getLogger("rmqcompat.consumer")


class Fetcher(Protocol):
    def fetch(self, max_records: int, timeout_s: float) -> Fetched:
        """Up to ``max_records`` records (or events), returning at the first one: a list,
        or the direct fetch's batch, which the intake reads alike (indexing gives a record,
        None once taken; ``batch[i] = None`` takes one)."""
        ...

    def route(self, tps: Iterable[TopicPartition]) -> None:
        """``tps`` are about to be assigned."""
        ...

    def close(self) -> None:
        """Before the consumer closes."""
        ...


class ConsumeFetcher:
    """Records from confluent-kafka's ``consume()`` (:func:`rmqcompat.fetch.fetch`)."""

    def __init__(self, consumer: Consumer) -> None:
        self._consumer = consumer

    def fetch(self, max_records: int, timeout_s: float) -> list[Any]:
        return fetch(self._consumer, max_records, timeout_s)

    def route(self, tps: Iterable[TopicPartition]) -> None:
        pass

    def close(self) -> None:
        pass


class DirectFetcher:
    """Records from librdkafka's queue of the partitions routed to it, after whatever the
    consumer's own queue holds (the group's events, served by ``consume(n, 0)``)."""

    def __init__(self, consumer: Consumer, direct: Any, consume_fields: bool = False) -> None:
        self._consumer = consumer
        self._direct = direct
        self._consume_fields = consume_fields
        self._closed = False

    def fetch(self, max_records: int, timeout_s: float) -> Fetched:
        served: list[Any] = self._consumer.consume(max_records, 0.0)
        timeout_s = 0.0 if served else timeout_s
        taken = self._direct.take(max_records, timeout_s, self._consume_fields)
        return [*served, *taken] if served else taken

    def route(self, tps: Iterable[TopicPartition]) -> None:
        if self._closed:  # leaving the group: nothing reads the partitions any more
            return
        for tp in tps:
            try:
                self._direct.forward(tp.topic, tp.partition)
            except RuntimeError as exc:  # its records stay on the consumer's queue
                _log.warning("%s[%s] read through consume(): %s", tp.topic, tp.partition, exc)

    def close(self) -> None:
        self._closed = True
        self._direct.close()


def new_fetcher(
    consumer: Consumer, config: dict[str, Any], consume_fields: bool = False
) -> Fetcher:
    """The direct fetch of ``consumer`` created with ``config``, where
    :func:`~rmqcompat.core_plugin.plugin_config` gave it the core as a plugin, else its
    ``consume()``. With ``consume_fields`` (a traced concurrent consumer) the direct fetch
    writes each record's CONSUME event fields as it copies it, which the intake keeps and
    settlement writes its event from (``native/src/received.rs``)."""
    direct = direct_fetch(config)
    if direct is not None:
        return DirectFetcher(consumer, direct, consume_fields)
    if plugin_token(config) is not None:
        _log.info("the consumer's records are read through consume(): no direct fetch")
    return ConsumeFetcher(consumer)
