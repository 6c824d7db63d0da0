"""Concurrent consumption (RocketMQ's ``ConsumeMessageConcurrentlyService``): batches of up
to ``consume_message_batch_max_size`` messages of a partition run on a shared pool of
listener threads in any order; results settle by ackIndex, failures are sent back."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from rmqcompat.consumer.dispatch import ConsumeBatch, Pool, add_consume_batches
from rmqcompat.consumer.partitions import Partitions
from rmqcompat.consumer.sendback import SendBack
from rmqcompat.consumer.settings import ConsumerSettings
from rmqcompat.consumer.settlement import Settlement
from rmqcompat.message import MessageExt
from rmqcompat.wire import Key

#: The consume timeout is checked at least this often (and four times per timeout).
_EXPIRY_CHECK_MAX_S = 1.0


class ConcurrentConsumeService:
    """:class:`~rmqcompat.consumer.consume_service.ConsumeService` over a
    :class:`~rmqcompat.consumer.dispatch.Pool` and a :class:`Settlement`."""

    def __init__(
        self,
        settings: ConsumerSettings,
        pool: Pool,
        sendback: SendBack,
        partitions: Partitions,
        clock: Callable[[], float],
    ) -> None:
        self._settings = settings
        self._pool = pool
        self._partitions = partitions
        self.settlement = Settlement(settings, sendback, partitions, pool, clock)
        self._batch_size = settings.consume_message_batch_max_size
        # one fetch worth of batches queued for the workers
        self._backlog_limit = -(-settings.pull_batch_size // self._batch_size)
        self._expiry_every_s = min(_EXPIRY_CHECK_MAX_S, settings.consume_timeout_s / 4)
        self._next_expiry_check = clock()

    def submit(self, staged: Mapping[Key, list[MessageExt]]) -> None:
        batches = self._batches(staged)
        self.settlement.track(batches)
        self._pool.submit(batches)

    def _batches(self, staged: Mapping[Key, list[MessageExt]]) -> list[ConsumeBatch]:
        size = self._batch_size
        out: list[ConsumeBatch] = []
        for key, msgs in staged.items():
            state = self._partitions.get(key)
            if state is None or not msgs:
                continue
            add_consume_batches(key, state.queue, state.pq, msgs, size, out)
        return out

    def settle(self) -> None:
        self.settlement.on_results(self._pool.results())

    def busy(self) -> bool:
        return self.settlement.running() > 0

    def saturated(self, timeout_s: float) -> bool:
        # False when the workers made no progress (listeners busy): the engine fetches as
        # usual, so the flow-control thresholds bound what is held, exactly as without it.
        if self._pool.backlog() < self._backlog_limit:
            return False
        return self._pool.wait(timeout_s, backlog_below=self._backlog_limit // 2 + 1)

    def wait(self, timeout_s: float) -> bool:
        return self._pool.wait(timeout_s)

    def housekeeping(self, now: float) -> None:
        self.settlement.run_due(now)
        if now >= self._next_expiry_check:
            self.settlement.expire(now)
            self._next_expiry_check = now + self._expiry_every_s

    def quiet(self) -> bool:
        return self.settlement.quiet()

    def shutdown(self) -> None:
        self._pool.shutdown()
