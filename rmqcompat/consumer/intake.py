"""The poll thread's intake: one ``consume()`` result into per-partition listener messages.

Per-topic work (logical name, retry-topic reset, tag filter) is resolved once per topic
and per-partition lookups once per run of records (Kafka returns records partition by
partition), so the per-record cost is the decode itself and one process-queue insert, in
one loop without a helper call per record (this runs for every message).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from confluent_kafka import KafkaError

from rmqcompat.consumer.inbound import InboundTopic, reset_retry_topic
from rmqcompat.consumer.partitions import Partitions, PartitionState
from rmqcompat.consumer.subscriptions import Subscriptions
from rmqcompat.errors import RmqCompatError
from rmqcompat.message import MessageExt
from rmqcompat.trace import Tracer, hooks
from rmqcompat.wire import Key

_log = logging.getLogger("rmqcompat.consumer")

_EOF = KafkaError._PARTITION_EOF  # noqa: SLF001 - librdkafka's public event code

#: Called with a record that cannot be decoded (already in flight) and the reason.
Quarantine = Callable[[PartitionState, Any, str], None]


class Intake:
    """Decodes, filters and tracks fetched records; owned by the poll thread."""

    def __init__(
        self,
        subscriptions: Subscriptions,
        partitions: Partitions,
        quarantine: Quarantine,
        tracer: Tracer | None = None,
    ) -> None:
        self._subs = subscriptions
        self._tracer = tracer or Tracer.disabled()  # FILTER and QUARANTINE events
        self._own_retry = subscriptions.own_retry
        self._partitions = partitions
        self._quarantine = quarantine
        self._topics: dict[str, InboundTopic] = {}

    def accept(self, records: Sequence[Any]) -> dict[Key, list[MessageExt]]:
        """Messages to hand to the listener, per partition (keys: every partition seen).

        Each returned message, each poison record and nothing else is now in flight;
        filtered records only count as seen. Records of revoked partitions are skipped.
        """
        staged: dict[Key, list[MessageExt]] = {}
        topics, group, tracer = self._topics, self._subs.group, self._tracer
        key: Key | None = None
        state: PartitionState | None = None
        inbound: InboundTopic | None = None  # the run's topic, once resolved
        out: list[MessageExt] = []
        for record in records:
            err = record.error()
            if err is not None:
                if err.code() != _EOF:
                    _log.warning("consumer error (group=%s): %s", group, err)
                continue
            physical, partition = record.topic(), record.partition()
            if key is None or key[0] != physical or key[1] != partition:
                key = (physical, partition)
                inbound = topics.get(physical)
                state = self._partitions.get(key)
                if state is not None:  # else: revoked meanwhile; its new owner reads it
                    out = staged.setdefault(key, [])
                    if state.expect >= 0:  # once per assignment: was the position reset?
                        self._partitions.first_fetched(key, state, record.offset())
            if state is None:
                continue
            offset = record.offset()
            try:
                if inbound is None:
                    inbound = self._topic(physical)
                msg = inbound.decoder.decode(record, partition, offset)
                if inbound.own_retry is not None:
                    reset_retry_topic(msg, inbound.own_retry)
            except (RmqCompatError, ValueError) as exc:
                state.pq.add(offset, len(record.value() or b""))
                self._quarantine(state, record, str(exc))
                if tracer.enabled:
                    hooks.quarantined(tracer, record, str(exc), group)
                continue
            if inbound.tags is not None and not inbound.tags.matches(msg.tags):
                state.pq.seen(offset)  # filtered messages count as consumed
                if tracer.enabled:
                    tracer.emit(tracer.events.filtered(msg, group))
                continue
            state.pq.add(offset, len(msg.body))
            out.append(msg)
        return staged

    def _topic(self, physical: str) -> InboundTopic:
        inbound = InboundTopic.of(physical, self._own_retry, self._subs.filter_of(physical))
        self._topics[physical] = inbound
        return inbound
