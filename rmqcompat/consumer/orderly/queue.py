"""The head of one partition under orderly consumption, pure (no I/O, no clock, no threads).

RocketMQ's ``ProcessQueue`` keeps orderly messages in two maps: the ones waiting
(``msgTreeMap``) and the batch being consumed (``consumingMsgOrderlyTreeMap``);
``takeMessages`` moves the head batch from the first to the second, ``commit`` forgets it,
``makeMessageToConsumeAgain`` puts it back. Here the waiting messages are a deque in offset
order and the batch is whatever :meth:`OrderlyQueue.take` returned, until
:meth:`OrderlyQueue.done` or :meth:`OrderlyQueue.put_back`. Offsets stay in the engine's
:class:`~rmqcompat.process_queue.ProcessQueue` until a message is done, so the
committed offset never passes a message being consumed, suspended or dead-lettered.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from rmqcompat.message import MessageExt
from rmqcompat.process_queue import ProcessQueue


class OrderlyQueue:
    """Waiting messages of one partition and whether its head is taken.

    ``busy`` is True from :meth:`take` until :meth:`done` / :meth:`put_back`: the head batch
    is with the listener, suspended, or awaiting its dead letters' delivery reports, and no
    other batch of the partition may start. Owned by the poll thread.
    """

    def __init__(self, pq: ProcessQueue) -> None:
        self.pq = pq
        self._waiting: deque[MessageExt] = deque()
        self.busy = False
        self.closed = False  # being revoked: nothing more starts
        #: offset -> dead-letter sends that failed in a row (for the stuck report)
        self.dlq_failures: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self._waiting)

    def append(self, msgs: Iterable[MessageExt]) -> None:
        """Messages fetched now, in offset order, after every waiting one."""
        self._waiting.extend(msgs)

    def ready(self) -> bool:
        """A batch can start: the head is free, messages wait and the partition is ours."""
        return not (self.busy or self.closed or self.pq.dropped) and bool(self._waiting)

    def take(self, batch_size: int) -> list[MessageExt]:
        """The first ``batch_size`` waiting messages (fewer if fewer wait); marks busy."""
        waiting = self._waiting
        batch = [waiting.popleft() for _ in range(min(batch_size, len(waiting)))]
        self.busy = bool(batch)
        return batch

    def done(self) -> None:
        """The taken batch is finished (consumed or dead-lettered): the next may start."""
        self.busy = False

    def put_back(self, msgs: Iterable[MessageExt]) -> None:
        """Return messages of the taken batch to the head, in offset order (RocketMQ's
        ``makeMessageToConsumeAgain``); they are the next batch. Stays busy: the caller
        frees the head with :meth:`done` once the suspension is over."""
        self._waiting.extendleft(sorted(msgs, key=lambda m: m.queue_offset, reverse=True))
