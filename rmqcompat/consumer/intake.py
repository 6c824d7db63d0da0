"""The poll thread's intake: one ``consume()`` result into per-partition listener messages.

Per-topic work (logical name, retry-topic reset, tag filter) is resolved once per topic
and per-partition lookups once per run of records (Kafka returns records partition by
partition), so the per-record cost is the decode itself and one process-queue insert.
Where a topic needs no tag filter, the rest of a partition's run after its first record
is taken in one call (:func:`accept_run`) while its records are in the decode's common
case (and, on the group's retry topic, carry a ``RETRY_TOPIC`` already checked); the loop
decides every other record one by one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from confluent_kafka import KafkaError

from rmqcompat.consumer.inbound import InboundTopic, reset_checked, reset_retry_topic
from rmqcompat.consumer.partitions import Partitions, PartitionState
from rmqcompat.consumer.subscriptions import Subscriptions
from rmqcompat.core import CORE
from rmqcompat.errors import RmqCompatError
from rmqcompat.message import MessageExt
from rmqcompat.process_queue import ProcessQueue
from rmqcompat.trace import Tracer, hooks
from rmqcompat.wire import Fetched, Key, plain_decode, run_offset

_log = logging.getLogger("rmqcompat.consumer")

_EOF = KafkaError._PARTITION_EOF  # noqa: SLF001 - librdkafka's public event code

#: Called with a record that cannot be decoded (already in flight) and the reason.
Quarantine = Callable[[PartitionState, Any, str], None]


def accept_run(
    records: Fetched,
    start: int,
    where: tuple[str, str, int],
    pq: ProcessQueue,
    out: list[MessageExt],
    checked: dict[str, str] | None = None,
) -> int:
    """Take the records of one partition from ``records[start]`` on, in one call.

    ``where`` is their physical topic, logical topic and partition. It goes on while the
    next record is of that partition (:func:`rmqcompat.wire.run_offset`) and in the
    decode's common case (:func:`rmqcompat.wire.plain_decode`): each one's message is
    tracked in ``pq`` and appended to ``out``, as the intake's loop does, and the record is
    taken out of ``records`` (None in its place, see :meth:`Intake.accept`). Returns the
    index of the first record it did not take, which the loop then decides. Only for a topic
    whose messages need no tag filter; on the group's retry topic (``checked`` its
    :attr:`~rmqcompat.consumer.inbound.InboundTopic.checked`) each message is reset to its
    original topic (:func:`~rmqcompat.consumer.inbound.reset_checked`), and the run stops
    at a ``RETRY_TOPIC`` not checked yet. The pure-Python reference of the core's
    ``accept_run`` (``tests/unit/test_core_parity.py`` runs both).
    """
    physical, logical, partition = where
    end = len(records)
    while start < end:
        record = records[start]
        if record is None:  # taken already
            break
        offset = run_offset(record, physical, partition)
        if offset is None:
            break
        msg = plain_decode(record, physical, logical, partition, offset)
        if msg is None or (checked is not None and not reset_checked(msg, checked)):
            break
        pq.add(offset, len(msg.body))
        out.append(msg)
        records[start] = None
        start += 1
    return start


_accept_run = accept_run if CORE is None else CORE.accept_run


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

    def accept(self, records: Fetched) -> dict[Key, list[MessageExt]]:
        """Messages to hand to the listener, per partition (keys: every partition seen).

        Each returned message, each poison record and nothing else is now in flight;
        filtered records only count as seen. Records of revoked partitions are skipped.

        ``records`` is used up: each is replaced by None once read, so a record is freed
        as soon as its message is built rather than with the whole fetch. Otherwise the
        fetch's records (and their header lists) are what the cyclic collector finds
        alive at the collections the new messages set off, and promotes: measured at
        batch size 1, five full collections per 100,000 messages, and one with this.
        """
        staged: dict[Key, list[MessageExt]] = {}
        topics, group, tracer = self._topics, self._subs.group, self._tracer
        key: Key | None = None
        state: PartitionState | None = None
        inbound: InboundTopic | None = None  # the run's topic, once resolved
        out: list[MessageExt] = []
        at, end = 0, len(records)
        while at < end:
            record = records[at]
            records[at] = None
            at += 1
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
                    reset_retry_topic(msg, inbound.own_retry, inbound.checked)
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
            if inbound.plain:  # the rest of the partition's run, while it is plain
                where = inbound.where(partition)
                at = _accept_run(records, at, where, state.pq, out, inbound.checked)
        return staged

    def _topic(self, physical: str) -> InboundTopic:
        inbound = InboundTopic.of(physical, self._own_retry, self._subs.filter_of(physical))
        self._topics[physical] = inbound
        return inbound
