"""FIFO by message group: key-ordered lanes inside a partition.

RocketMQ 5 delivers the messages of one ``message_group`` in order, the next only after
the previous one is settled, while other groups keep flowing. A Kafka partition holds
many groups, and a partition-ordered consumer would let one stuck group block all of
them. So the core's concurrent consume service is given a gate (Confluent Parallel
Consumer's key-ordered mode): :class:`LaneService` sees every fetched message on the
poll thread, in offset order, and passes a FIFO message on to the listener threads only
when no earlier message of its (partition, group) lane is still with the listener;
the others wait in their lane, still in the partition's process queue, so the committed
offset never passes them. Messages without a group pass at once.

A waiting message leaves its lane when the one ahead of it returned from the listener
(acked, or dead-lettered: the DLQ record is then on its way and the offset will not move
past it before Kafka acknowledged it). A revoked partition's lanes are dropped: the new
owner reads those messages again. Bound: a stuck group's backlog stays in the process
queue, so once it exceeds the partition's flow-control threshold
(``pull_threshold_for_queue``, 1000 messages) the partition pauses for every group.

Given ``lost_attempts`` (a SimpleConsumer's attempt log, :mod:`rmqcompat.v5.attempts`),
the service asks it once per assignment of a partition which offsets a member that died
had handed out, and counts those attempts on the messages before anything else sees them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from functools import cached_property

from rmqcompat.consumer.concurrent import ConcurrentConsumeService
from rmqcompat.message import MessageExt
from rmqcompat.process_queue import ProcessQueue
from rmqcompat.v5.attempts import restore
from rmqcompat.v5.message import MESSAGE_GROUP
from rmqcompat.wire import Key

LaneKey = tuple[Key, str]


class Lanes:
    """Which FIFO message may go to the listener now (pure bookkeeping, one thread)."""

    def __init__(self) -> None:
        self._waiting: dict[LaneKey, deque[MessageExt]] = {}
        self._owner: dict[LaneKey, ProcessQueue] = {}

    def admit(self, key: Key, pq: ProcessQueue, msgs: list[MessageExt]) -> list[MessageExt]:
        """The messages of ``msgs`` (offset order) that may run now; the rest wait."""
        out = []
        for msg in msgs:
            group = msg.properties.get(MESSAGE_GROUP)
            if group is None:
                out.append(msg)
                continue
            lane = (key, group)
            if self._owner.get(lane) is not pq:  # new lane, or the partition came back
                self._waiting.pop(lane, None)
                self._owner[lane] = pq
            waiting = self._waiting.get(lane)
            if waiting is None:
                self._waiting[lane] = deque()
                out.append(msg)
            else:
                waiting.append(msg)
        return out

    def release(self, key: Key, msg: MessageExt) -> MessageExt | None:
        """``msg`` of partition ``key`` is done: the next of its lane, if one waits."""
        group = msg.properties.get(MESSAGE_GROUP)
        if group is None:
            return None
        lane = (key, group)
        waiting = self._waiting.get(lane)
        if not waiting:
            self._waiting.pop(lane, None)
            self._owner.pop(lane, None)
            return None
        return waiting.popleft()

    def drop(self, keep: set[Key]) -> None:
        """Forget the lanes of partitions not in ``keep`` (revoked)."""
        for lane in [lane for lane in self._waiting if lane[0] not in keep]:
            del self._waiting[lane]
            self._owner.pop(lane, None)

    def waiting(self) -> int:
        return sum(len(q) for q in self._waiting.values())


#: Offset -> attempt handed out by a member that died, per partition (see the module doc).
LostAttempts = Callable[[Key], Mapping[int, int]]


class LaneService(ConcurrentConsumeService):
    """The concurrent consume service behind a :class:`Lanes` gate."""

    lost_attempts: LostAttempts | None = None

    @cached_property
    def lanes(self) -> Lanes:
        return Lanes()

    @cached_property
    def _lost(self) -> dict[Key, tuple[ProcessQueue, Mapping[int, int]]]:
        return {}

    def submit(self, staged: Mapping[Key, list[MessageExt]]) -> None:
        admitted = {}
        for key, msgs in staged.items():
            state = self._partitions.get(key)
            if state is not None:
                if self.lost_attempts is not None:
                    self._restore(key, state.pq, msgs, self.lost_attempts)
                admitted[key] = self.lanes.admit(key, state.pq, msgs)
        super().submit(admitted)

    def _restore(
        self, key: Key, pq: ProcessQueue, msgs: list[MessageExt], lost: LostAttempts
    ) -> None:
        known = self._lost.get(key)
        if known is None or known[0] is not pq:  # assigned (again) since last asked
            known = self._lost[key] = (pq, lost(key))
        if known[1]:
            restore(msgs, known[1])

    def settle(self) -> None:
        results = self._pool.results()
        self.settlement.on_results(results)
        lanes = self.lanes
        lanes.drop(set(self._partitions.keys()))
        follow: dict[Key, list[MessageExt]] = {}
        for batch in results:
            state = self._partitions.get(batch.key)
            if state is None or state.pq is not batch.pq:
                continue
            for msg in batch.messages:
                nxt = lanes.release(batch.key, msg)
                if nxt is not None:
                    follow.setdefault(batch.key, []).append(nxt)
        if follow:
            super().submit(follow)
