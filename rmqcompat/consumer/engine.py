"""The poll thread of a push consumer: fetch, hand over to the consume service, commit.

One thread owns the confluent consumer, the process queues and the send-back producer;
the consume service (:mod:`rmqcompat.consumer.consume_service`) decides how messages
reach the listener and settles their results. Nothing leaves a process queue before
Kafka confirmed where it went (acked, parked, dead-lettered, quarantined), so offsets
never pass a message whose fate is unknown.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException

from rmqcompat.consumer.consume_service import ConsumeService
from rmqcompat.consumer.fetcher import ConsumeFetcher, Fetcher
from rmqcompat.consumer.intake import Intake
from rmqcompat.consumer.partitions import Partitions, PartitionState
from rmqcompat.consumer.sendback import RecordSink
from rmqcompat.consumer.settings import ConsumerSettings
from rmqcompat.consumer.subscriptions import Subscriptions
from rmqcompat.consumer.timers import Timers
from rmqcompat.quarantine import quarantine_record
from rmqcompat.trace import Tracer

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
        service: ConsumeService,
        partitions: Partitions,
        clock: Callable[[], float] = time.monotonic,
        reconcile: Callable[[], None] = lambda: None,
        rediscover: Callable[[], None] | None = None,
        rejoin: Callable[[], None] | None = None,
        tracer: Tracer | None = None,
        fetcher: Fetcher | None = None,
    ) -> None:
        self.settings = settings
        self._subs = subscriptions
        self._consumer = consumer
        self._fetcher = fetcher or ConsumeFetcher(consumer)
        self._sink = sink
        self._service = service
        self.partitions = partitions
        self._clock = clock
        self._reconcile = reconcile  # after an error raised out of a rebalance callback
        self._rediscover = rediscover  # BROADCASTING: pick up partitions created since
        self._next_discovery = clock() + settings.broadcast_rediscover_interval_s
        self._rejoin = rejoin  # CLUSTERING: rejoins when a partition stays unowned
        self._timers = Timers(clock)  # quarantine produces to try again
        self._stopping = threading.Event()
        self._next_commit = clock() + settings.persist_consumer_offset_interval
        self._intake = Intake(subscriptions, partitions, self._quarantine, tracer)

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
        # a pause makes librdkafka drop its prefetched records: rather than fetch while a
        # whole fetch still waits for the listener, give the listener a moment
        if not self._service.saturated(POLL_TIMEOUT_S):
            busy = self._service.busy()
            fetched = self._fetch(0.0 if busy else POLL_TIMEOUT_S)
            if busy and not fetched:  # wait for listener results rather than records
                self._service.wait(POLL_TIMEOUT_S)
        self._settle_results()
        self._housekeeping()

    def stop(self) -> None:
        self._stopping.set()

    def _fetch(self, timeout: float) -> int:
        records = self._fetcher.fetch(self.settings.pull_batch_size, timeout)
        if not records:
            return 0
        staged = self._intake.accept(records)
        self._service.submit(staged)
        for key in staged:
            self.partitions.check_pause(key, self._consumer)
        return len(records)

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
                retry_s = self.settings.send_back_failure_delay_s
                self._timers.later(lambda: self._sink.produce(out, done), retry_s)

        self._sink.produce(out, done)

    def _settle_results(self) -> None:
        # the reports first: the settling after them traces the send-backs they stored
        self._sink.poll()
        self._service.settle()

    def _housekeeping(self) -> None:
        now = self._clock()
        self._timers.run_due(now)
        self._service.housekeeping(now)
        self.partitions.resume_ready(self._consumer)
        if now >= self._next_commit:
            self.partitions.commit(asynchronous=True)
            self._next_commit = now + self.settings.persist_consumer_offset_interval
        if self._rediscover is not None and now >= self._next_discovery:
            self._rediscover()
            self._next_discovery = self._clock() + self.settings.broadcast_rediscover_interval_s
        if self._rejoin is not None:
            self._rejoin()  # timed by itself

    def _drain(self) -> None:
        """Stop fetching, let running listeners and send-backs finish, then commit."""
        self.partitions.pause_all(self._consumer)
        deadline = self._clock() + self.settings.await_termination_s
        while not self._service.quiet() and self._clock() < deadline:
            self._consumer.consume(1, 0.0)  # serves rebalance callbacks meanwhile
            self._service.wait(POLL_TIMEOUT_S)
            self._settle_results()
        self._sink.flush(min(5.0, self.settings.send_back_timeout_s))
        self._settle_results()
        self.partitions.commit(asynchronous=False)
        self._fetcher.close()
        self._sink.close()
