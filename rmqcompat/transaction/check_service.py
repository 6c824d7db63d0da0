"""The check service: settles the undecided half messages of one producer group.

It runs in the producer process (RocketMQ runs it in the broker and calls a producer of
the group back; here the producer *is* the caller). One Kafka consumer, in a consumer
group of its own per producer group, reads the half and op topics ``read_committed``
with the range assignor: half partition p and op partition p always go to the same
member, so each half message is checked by one producer instance at a time, and a
restarted (or another) instance of the group takes over what a dead one left.

Op partitions are read from their beginning on every assignment; half partitions from
the committed *watermark*, the oldest half still undecided. A half is checked only once
its op partition has been read to its end, so a decision already written is never
asked for again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient

from rmqcompat.clock import Clock
from rmqcompat.closing import close_group_member
from rmqcompat.consumer.unowned import UnownedWatch, rejoin
from rmqcompat.errors import RmqCompatError
from rmqcompat.lookups import with_retries
from rmqcompat.message import MessageExt
from rmqcompat.topics.naming import (
    TRANS_CHECK_MAX_TIME_TOPIC,
    TRANS_HALF_TOPIC,
    TRANS_OP_HALF_TOPIC,
    to_kafka_topic,
)
from rmqcompat.transaction.ender import EndTransactionError, TransactionEnder
from rmqcompat.transaction.pending import Due, PendingHalves
from rmqcompat.transaction.records import Half, Op, OpKind, decision, read_half, read_op
from rmqcompat.transaction.state import LocalTransactionState
from rmqcompat.wire import TopicDecoder

_log = logging.getLogger("rmqcompat.transaction")

Checker = Callable[[MessageExt], LocalTransactionState]


class CheckService:
    """Reads, tracks and checks the half messages of ``pending.group`` on its own thread.

    ``checker`` never raises (the producer wraps the user's listener). ``stop`` commits
    the watermarks and leaves the group.
    """

    def __init__(
        self,
        consumer_settings: Mapping[str, Any],
        namespace: str,
        pending: PendingHalves,
        ender: TransactionEnder,
        checker: Checker,
        clock_ms: Clock,
        admin_settings: Mapping[str, Any] | None = None,
    ) -> None:
        self._settings = dict(consumer_settings)
        #: for the unowned-partition check (:mod:`rmqcompat.consumer.unowned`); None: none
        self._admin_settings = admin_settings
        self._unowned: UnownedWatch | None = None
        self._half_topic = to_kafka_topic(TRANS_HALF_TOPIC, namespace)
        self._op_topic = to_kafka_topic(TRANS_OP_HALF_TOPIC, namespace)
        self._decoder = TopicDecoder.of(self._half_topic)
        self._pending = pending
        self._ender = ender
        self._checker = checker
        self._clock_ms = clock_ms
        self._owned: set[int] = set()
        self._committed: dict[int, int] = {}
        self._stop = threading.Event()
        #: an assignment could not start (no watermarks): leave and join again
        self._rejoin = False
        self._consumer: Consumer | None = None
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None

    def start(self) -> None:
        consumer = Consumer(self._settings)
        self._subscribe(consumer)
        self._consumer = consumer
        if self._admin_settings is not None:
            admin = AdminClient(dict(self._admin_settings))
            group_id = self._settings["group.id"]
            topics = [self._half_topic, self._op_topic]
            self._unowned = UnownedWatch(admin, group_id, topics, time.monotonic)
        name = f"rmqcompat-trans-check-{self._pending.group}"
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _subscribe(self, consumer: Consumer) -> None:
        consumer.subscribe(
            [self._half_topic, self._op_topic], on_assign=self._on_assign, on_revoke=self._on_revoke
        )

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._unowned is not None:
            self._unowned.close()
        if self._consumer is not None:
            self._commit(asynchronous=False)
            close_group_member(self._consumer, self._settings)

    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        consumer = self._consumer
        assert consumer is not None
        poll_s = self._pending.settings.poll_interval_s
        try:
            while not self._stop.is_set():
                for record in consumer.consume(500, poll_s):
                    self._read(record)
                self._check_due(consumer)
                self._commit(asynchronous=True)
                self._rejoin_if_asked(consumer)
                if self._unowned is not None:
                    # a half or op partition no member owns: its halves would never be checked
                    self._unowned.rejoin_if_due(consumer, self._subscribe)
        except BaseException as exc:  # the thread must say why it ended
            _log.exception("check service of %s stopped", self._pending.group)
            self.error = exc

    def _rejoin_if_asked(self, consumer: Consumer) -> None:
        """Leave the group and join it again (:func:`rejoin`) when an assignment could not
        start: the next assignment looks its watermarks up afresh."""
        if self._rejoin:
            self._rejoin = False
            rejoin(consumer, self._subscribe)

    def _read(self, record: Any) -> None:
        if record.error() is not None:
            _log.warning("check service read error: %s", record.error())
            return
        try:
            if record.topic() == self._half_topic:
                self._pending.add_half(read_half(record, self._decoder))
            else:
                self._pending.apply_op(record.partition(), read_op(record), record.timestamp()[1])
        except RmqCompatError as exc:
            _log.error(
                "unreadable record %s[%s]@%s skipped: %s",
                record.topic(),
                record.partition(),
                record.offset(),
                exc,
            )

    def _check_due(self, consumer: Consumer) -> None:
        now = self._clock_ms()
        for partition in sorted(self._owned):
            due = self._pending.due(partition, now)
            if due and self._ops_read(consumer, partition):
                for one in due:
                    self._settle(one)

    def _ops_read(self, consumer: Consumer, partition: int) -> bool:
        """True once op partition ``partition`` is read to its end (decisions written before
        now are known). Control records of transactions count as read."""
        tp = TopicPartition(self._op_topic, partition)
        try:
            _, high = consumer.get_watermark_offsets(tp, timeout=5, cached=False)
            position = consumer.position([tp])[0].offset
        except KafkaException as exc:
            _log.warning("end of %s[%d] unknown, checks wait: %s", self._op_topic, partition, exc)
            return False
        return position >= high or (position < 0 and high == 0)

    def _settle(self, due: Due) -> None:
        half = due.half
        try:
            if due.discard:
                _log.warning(
                    "half message %s still undecided after %d checks: rolled back, a copy "
                    "kept in %s",
                    half.message.msg_id,
                    due.checks_done,
                    TRANS_CHECK_MAX_TIME_TOPIC,
                )
                self._decide(half, OpKind.ROLLBACK, discard=True)
                return
            check = due.checks_done + 1
            self._decide(half, OpKind.CHECK, check)
            kind = decision(self._checker(half.message))
            if kind is not None:
                self._decide(half, kind, check)
        except EndTransactionError as exc:
            _log.warning("check of %s not recorded, retried later: %s", half.message.msg_id, exc)

    def _decide(
        self, half: Half, kind: OpKind, check_times: int = 0, discard: bool = False
    ) -> None:
        self._ender.end(half, kind, check_times, discard)
        op = Op(kind, half.group, half.offset, check_times)
        self._pending.apply_op(half.partition, op, self._clock_ms())

    def _on_assign(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        halves = [tp for tp in partitions if tp.topic == self._half_topic]
        # A lookup that times out on a loaded broker is asked again; one that never
        # answers leaves the partitions unread (their halves wait in Kafka) and the
        # service joins the group again. Raised from this callback, the error would end
        # the service's thread (2026-11-27, a CI run).
        try:
            committed = (
                with_retries(
                    "committed watermarks of the half topic",
                    lambda: consumer.committed(halves, timeout=10),
                )
                if halves
                else []
            )
        except KafkaException as exc:
            _log.error(
                "check service of %s: no committed watermarks, joining the group again: %s",
                self._pending.group,
                exc,
            )
            self._rejoin = True
            return
        for tp in committed:
            start = tp.offset if tp.offset >= 0 else 0
            self._pending.begin(tp.partition, start)
            self._owned.add(tp.partition)
        for tp in partitions:
            if tp.topic == self._op_topic:
                tp.offset = OFFSET_BEGINNING
        consumer.assign(partitions)

    def _on_revoke(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self._commit(asynchronous=False)
        for tp in partitions:
            if tp.topic == self._half_topic:
                self._owned.discard(tp.partition)
                self._committed.pop(tp.partition, None)
                self._pending.forget(tp.partition)
        consumer.unassign()

    def _commit(self, asynchronous: bool) -> None:
        consumer = self._consumer
        if consumer is None or not self._owned:
            return
        tps = [TopicPartition(self._half_topic, p) for p in sorted(self._owned)]
        marks = {
            tp.partition: self._pending.watermark(tp.partition, tp.offset)
            for tp in consumer.position(tps)
            if tp.offset >= 0
        }
        changed = {p: mark for p, mark in marks.items() if self._committed.get(p) != mark}
        if not changed:
            return
        offsets = [TopicPartition(self._half_topic, p, mark) for p, mark in changed.items()]
        try:
            if asynchronous:
                consumer.commit(offsets=offsets, asynchronous=True)
            else:
                consumer.commit(offsets=offsets, asynchronous=False)
            self._committed.update(changed)
        except KafkaException as exc:
            _log.warning("watermark commit failed (retried): %s", exc)
