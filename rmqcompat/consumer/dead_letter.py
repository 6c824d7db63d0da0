"""Dead-lettering a message at once when its send-back was refused for good.

A send-back that fails for a reason a retry cannot fix (the record is too large for the
retry path, the topic is not authorised...) would otherwise be consumed locally again
and again, past ``max_reconsume_times``, pinning the partition's offset. Such a message
goes straight to ``%DLQ%<group>`` instead. If the DLQ refuses it too, it stays in flight
(nothing is lost; the committed offset cannot pass it), is logged as an error and is
listed as stuck until a later attempt succeeds (e.g. once an operator raised a limit).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from confluent_kafka import KafkaError

from rmqcompat.consumer.dispatch import ConsumeBatch
from rmqcompat.consumer.partitions import Partitions
from rmqcompat.consumer.sendback import SendBack
from rmqcompat.message import MessageExt
from rmqcompat.producer.failures import is_retriable
from rmqcompat.retry import DLQ_NOW

_log = logging.getLogger("rmqcompat.consumer")

#: Seconds between attempts for a message the DLQ refused for good (each one logs an error).
STUCK_RETRY_S = 60.0

#: Schedules an action on the poll thread after a delay (seconds).
Later = Callable[[Callable[[], None], float], None]


class DirectDeadLetter:
    """Owned by the poll thread; ``pending`` counts produces awaiting their report."""

    def __init__(
        self, sendback: SendBack, partitions: Partitions, later: Later, retry_s: float
    ) -> None:
        self._sendback = sendback
        self._partitions = partitions
        self._later = later
        self._retry_s = retry_s
        self.pending = 0

    def send(
        self, batch: ConsumeBatch, msg: MessageExt, reconsume_times: int, cause: KafkaError
    ) -> None:
        """Dead-letter ``msg`` (stored count ``reconsume_times``), retrying until it is."""
        _log.error(
            "send-back of %s refused for good (%s); dead-lettering it at once (group=%s)",
            msg.msg_id,
            cause.str(),
            self._sendback.group,
        )
        self._attempt(batch, msg, reconsume_times)

    def _attempt(self, batch: ConsumeBatch, msg: MessageExt, reconsume_times: int) -> None:
        if batch.pq.dropped:
            return  # revoked: the new owner consumes it again
        self.pending += 1
        self._sendback.send(
            msg, reconsume_times, DLQ_NOW, lambda err: self._done(batch, msg, reconsume_times, err)
        )

    def _done(
        self, batch: ConsumeBatch, msg: MessageExt, reconsume_times: int, err: KafkaError | None
    ) -> None:
        self.pending -= 1
        offset = msg.queue_offset
        if err is None:
            batch.pq.remove(offset)
            self._partitions.unstick(batch.key, offset)
            return
        if is_retriable(err):
            self._later(lambda: self._attempt(batch, msg, reconsume_times), self._retry_s)
            return
        _log.error(
            "STUCK: %s (%s[%d]@%d) refused by the retry path and the DLQ (%s); kept in "
            "flight, its partition's offset cannot pass it; retrying in %.0f s",
            msg.msg_id,
            batch.queue.topic,
            batch.queue.queue_id,
            offset,
            err.str(),
            STUCK_RETRY_S,
        )
        self._partitions.mark_stuck(batch.key, batch.pq, offset, msg.msg_id, err.str())
        self._later(lambda: self._attempt(batch, msg, reconsume_times), STUCK_RETRY_S)
