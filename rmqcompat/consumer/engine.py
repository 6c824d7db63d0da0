"""The poll thread of a concurrent push consumer: fetch, dispatch, settle, commit.

One thread owns the confluent consumer, the process queues and the send-back producer;
workers only run the listener. Nothing leaves a process queue before Kafka confirmed
where it went (acked, parked, dead-lettered, quarantined), so offsets never pass a
message whose fate is unknown.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from confluent_kafka import Consumer, KafkaError

from rmqcompat.consumer.dispatch import ConsumeBatch, WorkerPool
from rmqcompat.consumer.inbound import to_listener_message
from rmqcompat.consumer.partitions import Key, Partitions, PartitionState
from rmqcompat.consumer.sendback import RecordSink, SendBack
from rmqcompat.consumer.settings import ConsumerSettings
from rmqcompat.consumer.settlement import Settlement
from rmqcompat.consumer.subscriptions import Subscriptions
from rmqcompat.errors import RmqCompatError
from rmqcompat.message import MessageExt
from rmqcompat.quarantine import quarantine_record

_log = logging.getLogger("rmqcompat.consumer")

POLL_TIMEOUT_S = 0.05
_EOF = KafkaError._PARTITION_EOF  # noqa: SLF001 - librdkafka's public event code


class Engine:
    """Runs the consume loop (on the caller's thread) until :meth:`stop`, then drains.

    Never raises for broker errors: they are logged and the loop goes on.
    """

    def __init__(
        self,
        settings: ConsumerSettings,
        subscriptions: Subscriptions,
        consumer: Consumer,
        sink: RecordSink,
        pool: WorkerPool,
        partitions: Partitions,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self._subs = subscriptions
        self._consumer = consumer
        self._sink = sink
        self._pool = pool
        self.partitions = partitions
        self._clock = clock
        sendback = SendBack(sink, settings.retry_policy(), settings.client.namespace)
        self.settlement = Settlement(settings, sendback, partitions, pool, clock)
        self._stopping = threading.Event()
        self._next_commit = clock() + settings.persist_consumer_offset_interval
        self._next_expiry_check = clock()

    def run(self) -> None:
        while not self._stopping.is_set():
            busy = self.settlement.running() > 0
            fetched = self._fetch(0.0 if busy else POLL_TIMEOUT_S)
            # with listeners running, wait for their results rather than for new records
            self._settle_results(POLL_TIMEOUT_S if busy and not fetched else 0.0)
            self._housekeeping()
        self._drain()

    def stop(self) -> None:
        self._stopping.set()

    def _fetch(self, timeout: float) -> int:
        records = self._consumer.consume(self.settings.pull_batch_size, timeout)
        staged: dict[Key, list[MessageExt]] = {}
        for record in records:
            err = record.error()
            if err is not None:
                if err.code() != _EOF:
                    _log.warning("consumer error (group=%s): %s", self.settings.group, err)
                continue
            key = (record.topic(), record.partition())
            state = self.partitions.get(key)
            if state is not None:  # else: revoked meanwhile; its new owner reads it
                self._accept(state, record, staged.setdefault(key, []))
        batches = self._batches(staged)
        self.settlement.track(batches)
        self._pool.submit(batches)
        for key in staged:
            self.partitions.check_pause(key, self._consumer)
        return len(records)

    def _accept(self, state: PartitionState, record: Any, staged: list[MessageExt]) -> None:
        offset = record.offset()
        try:
            msg = to_listener_message(record, self._subs.own_retry)
        except (RmqCompatError, ValueError) as exc:
            state.pq.add(offset, len(record.value() or b""))
            self._quarantine(state, record, str(exc))
            return
        if not self._subs.matches(record.topic(), msg.tags):
            state.pq.seen(offset)  # filtered messages count as consumed
            return
        state.pq.add(offset, len(msg.body))
        staged.append(msg)

    def _batches(self, staged: dict[Key, list[MessageExt]]) -> list[ConsumeBatch]:
        size = self.settings.consume_message_batch_max_size
        out = []
        for key, msgs in staged.items():
            state = self.partitions.get(key)
            if state is None:
                continue
            for i in range(0, len(msgs), size):
                out.append(ConsumeBatch(key, state.queue, state.pq, msgs[i : i + size]))
        return out

    def _quarantine(self, state: PartitionState, record: Any, reason: str) -> None:
        _log.error(
            "poison record %s[%s]@%s quarantined: %s",
            record.topic(),
            record.partition(),
            record.offset(),
            reason,
        )
        out = quarantine_record(record, reason, self.settings.client.namespace)
        offset, pq = record.offset(), state.pq

        def done(ok: bool) -> None:
            if ok:
                pq.remove(offset)
            elif not pq.dropped:  # kept in flight (offset cannot pass it); try again later
                self.settlement.later(lambda: self._sink.produce(out, done))

        self._sink.produce(out, done)

    def _settle_results(self, timeout: float) -> None:
        for result in self._pool.results(timeout):
            self.settlement.on_result(result)
        self._sink.poll()

    def _housekeeping(self) -> None:
        now = self._clock()
        self.settlement.run_due(now)
        if now >= self._next_expiry_check:
            self.settlement.expire(now)
            self._next_expiry_check = now + min(1.0, self.settings.consume_timeout_s / 4)
        self.partitions.resume_ready(self._consumer)
        if now >= self._next_commit:
            self.partitions.commit(asynchronous=True)
            self._next_commit = now + self.settings.persist_consumer_offset_interval

    def _drain(self) -> None:
        """Stop fetching, let running listeners and send-backs finish, then commit."""
        self.partitions.pause_all(self._consumer)
        deadline = self._clock() + self.settings.await_termination_s
        while not self.settlement.quiet() and self._clock() < deadline:
            self._consumer.consume(1, 0.0)  # serves rebalance callbacks meanwhile
            self._settle_results(POLL_TIMEOUT_S)
        self._sink.flush(min(5.0, self.settings.send_back_timeout_s))
        self._settle_results(0.0)
        self.partitions.commit(asynchronous=False)
