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

from confluent_kafka import Consumer, KafkaError, KafkaException

from rmqcompat.consumer.dispatch import ConsumeBatch, WorkerPool
from rmqcompat.consumer.intake import Intake
from rmqcompat.consumer.partitions import Key, Partitions, PartitionState
from rmqcompat.consumer.sendback import RecordSink, SendBack
from rmqcompat.consumer.settings import ConsumerSettings
from rmqcompat.consumer.settlement import Settlement
from rmqcompat.consumer.subscriptions import Subscriptions
from rmqcompat.fetch import fetch
from rmqcompat.message import MessageExt
from rmqcompat.quarantine import quarantine_record

_log = logging.getLogger("rmqcompat.consumer")

POLL_TIMEOUT_S = 0.05


class Engine:
    """Runs the consume loop (on the caller's thread) until :meth:`stop`, then drains.

    Never raises for broker errors: they are logged and the loop goes on. Raises only a
    fatal ``KafkaException`` (the client is unusable) or a bug's exception.
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
        reconcile: Callable[[], None] = lambda: None,
        rediscover: Callable[[], None] | None = None,
    ) -> None:
        self.settings = settings
        self._subs = subscriptions
        self._consumer = consumer
        self._sink = sink
        self._pool = pool
        self.partitions = partitions
        self._clock = clock
        self._reconcile = reconcile  # after an error raised out of a rebalance callback
        self._rediscover = rediscover  # BROADCASTING: pick up partitions created since
        self._next_discovery = clock() + settings.broadcast_rediscover_interval_s
        sendback = SendBack(sink, settings.retry_policy(), settings.client.namespace)
        self.settlement = Settlement(settings, sendback, partitions, pool, clock)
        self._stopping = threading.Event()
        self._next_commit = clock() + settings.persist_consumer_offset_interval
        self._next_expiry_check = clock()
        self._intake = Intake(subscriptions, partitions, self._quarantine)
        # one fetch worth of batches queued for the workers
        self._backlog_limit = -(
            -settings.pull_batch_size // settings.consume_message_batch_max_size
        )

    def run(self) -> None:
        while not self._stopping.is_set():
            try:
                self._step()
            except KafkaException as exc:
                err = exc.args[0] if exc.args else None
                if not isinstance(err, KafkaError) or err.fatal():
                    raise
                # e.g. raised out of a rebalance callback by consume(): the next round
                # serves the group again; a pause keeps a persistent error from spinning
                _log.warning("poll loop error (group=%s): %s", self.settings.group, err)
                self._reconcile()
                self._stopping.wait(POLL_TIMEOUT_S)
        self._drain()

    def _step(self) -> None:
        if not self._yield_to_workers():
            busy = self.settlement.running() > 0
            fetched = self._fetch(0.0 if busy else POLL_TIMEOUT_S)
            if busy and not fetched:  # wait for listener results rather than records
                self._pool.wait(POLL_TIMEOUT_S)
        self._settle_results()
        self._housekeeping()

    def _yield_to_workers(self) -> bool:
        """With a whole fetch still queued for the workers, wait for them to catch up.

        Fetching more then would only grow the in-flight counts until flow control
        pauses partitions, and a pause makes librdkafka drop its prefetched records.
        False when they made no progress (listeners busy): fetch as usual, so the
        flow-control thresholds bound what is held, exactly as without this wait.
        """
        if self._pool.backlog() < self._backlog_limit:
            return False
        return self._pool.wait(POLL_TIMEOUT_S, backlog_below=self._backlog_limit // 2 + 1)

    def stop(self) -> None:
        self._stopping.set()

    def _fetch(self, timeout: float) -> int:
        records = fetch(self._consumer, self.settings.pull_batch_size, timeout)
        if not records:
            return 0
        staged = self._intake.accept(records)
        batches = self._batches(staged)
        self.settlement.track(batches)
        self._pool.submit(batches)
        for key in staged:
            self.partitions.check_pause(key, self._consumer)
        return len(records)

    def _batches(self, staged: dict[Key, list[MessageExt]]) -> list[ConsumeBatch]:
        size = self.settings.consume_message_batch_max_size
        out: list[ConsumeBatch] = []
        for key, msgs in staged.items():
            state = self.partitions.get(key)
            if state is None or not msgs:
                continue
            queue, pq = state.queue, state.pq
            if size == 1:  # RocketMQ's default: one message per listener call
                out += [ConsumeBatch(key, queue, pq, [m]) for m in msgs]
            else:
                out += [
                    ConsumeBatch(key, queue, pq, msgs[i : i + size])
                    for i in range(0, len(msgs), size)
                ]
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

        def done(err: KafkaError | None) -> None:
            if err is None:
                pq.remove(offset)
            elif not pq.dropped:  # kept in flight (offset cannot pass it); try again later
                self.settlement.later(lambda: self._sink.produce(out, done))

        self._sink.produce(out, done)

    def _settle_results(self) -> None:
        self.settlement.on_results(self._pool.results())
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
        if self._rediscover is not None and now >= self._next_discovery:
            self._rediscover()
            self._next_discovery = self._clock() + self.settings.broadcast_rediscover_interval_s

    def _drain(self) -> None:
        """Stop fetching, let running listeners and send-backs finish, then commit."""
        self.partitions.pause_all(self._consumer)
        deadline = self._clock() + self.settings.await_termination_s
        while not self.settlement.quiet() and self._clock() < deadline:
            self._consumer.consume(1, 0.0)  # serves rebalance callbacks meanwhile
            self._pool.wait(POLL_TIMEOUT_S)
            self._settle_results()
        self._sink.flush(min(5.0, self.settings.send_back_timeout_s))
        self._settle_results()
        self.partitions.commit(asynchronous=False)
        self._sink.close()
