"""Dead letters of orderly consumption (RocketMQ's orderly ``sendMessageBack``).

A message of a suspended batch that already failed ``max_reconsume_times`` times goes to
``%DLQ%<group>`` through the send-back path (the retry decision routes it). Its partition
moves on only once every dead letter of the batch was acknowledged by Kafka. One whose
produce failed is kept (nothing is lost): it counts one more failure and is consumed
again after the suspension, as in RocketMQ; after
:data:`~rmqcompat.consumer.settlement.STUCK_AFTER_FAILED_SEND_BACKS` failures in a row it
is listed as stuck, until it is dead-lettered or consumed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from functools import partial

from confluent_kafka import KafkaError

from rmqcompat.consumer.orderly.queue import OrderlyQueue
from rmqcompat.consumer.partitions import Partitions
from rmqcompat.consumer.sendback import SendBack
from rmqcompat.consumer.settlement import STUCK_AFTER_FAILED_SEND_BACKS
from rmqcompat.message import MessageExt
from rmqcompat.wire import Key

_log = logging.getLogger("rmqcompat.consumer")


class OrderlyDeadLetters:
    """Owned by the poll thread; ``pending`` counts produces awaiting their report."""

    def __init__(self, sendback: SendBack, partitions: Partitions) -> None:
        self._sendback = sendback
        self._partitions = partitions
        self.pending = 0

    def send(
        self,
        key: Key,
        queue: OrderlyQueue,
        dead: Sequence[MessageExt],
        then: Callable[[list[MessageExt]], None],
    ) -> None:
        """Dead-letter ``dead`` (of ``key``'s taken batch); once every report came,
        ``then(kept)`` with the ones that failed, unless the partition was dropped."""
        remaining = [len(dead)]
        kept: list[MessageExt] = []

        def reported(msg: MessageExt, err: KafkaError | None) -> None:
            self.pending -= 1
            remaining[0] -= 1
            if err is None:
                self.forget(key, queue, msg)
                queue.pq.remove(msg.queue_offset)
            else:
                self._failed(key, queue, msg, err)
                kept.append(msg)
            if remaining[0] == 0 and not queue.pq.dropped:
                then(kept)

        for msg in dead:
            self.pending += 1
            self._sendback.send(msg, msg.reconsume_times, 0, partial(reported, msg))

    def forget(self, key: Key, queue: OrderlyQueue, msg: MessageExt) -> None:
        """``msg`` is done (dead-lettered or consumed): no longer failing, no longer stuck."""
        queue.dlq_failures.pop(msg.queue_offset, None)
        self._partitions.unstick(key, msg.queue_offset)

    def _failed(self, key: Key, queue: OrderlyQueue, msg: MessageExt, err: KafkaError) -> None:
        failures = queue.dlq_failures.get(msg.queue_offset, 0) + 1
        queue.dlq_failures[msg.queue_offset] = failures
        _log.error(
            "dead-lettering %s (%s[%d]@%d) failed (%s); kept, consumed again after the "
            "suspension (group=%s)",
            msg.msg_id,
            key[0],
            key[1],
            msg.queue_offset,
            err.str(),
            self._sendback.group,
        )
        msg.reconsume_times += 1
        if failures >= STUCK_AFTER_FAILED_SEND_BACKS:
            cause = f"dead-lettering failed {failures} times in a row ({err.name()}: {err.str()})"
            self._partitions.mark_stuck(key, queue.pq, msg.queue_offset, msg.msg_id, cause)
