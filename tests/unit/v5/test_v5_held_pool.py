"""The SimpleConsumer's hand-over pool: batches finish when their lease ends (fixed clock)."""

from __future__ import annotations

from rmqcompat.consumer.dispatch import ConsumeBatch
from rmqcompat.consumer.listener import ConsumeConcurrentlyStatus
from rmqcompat.message import MessageExt, MessageQueue
from rmqcompat.process_queue import ProcessQueue
from rmqcompat.retry.decision import DLQ_NOW
from rmqcompat.v5.attempts import Held, decode
from rmqcompat.v5.handoff import Handoff
from rmqcompat.v5.held_pool import HeldPool
from rmqcompat.v5.leases import Leases
from rmqcompat.v5.message import MESSAGE_GROUP

SUCCESS = ConsumeConcurrentlyStatus.CONSUME_SUCCESS
LATER = ConsumeConcurrentlyStatus.RECONSUME_LATER
GIVE_BACK = 1
KEY = ("ns.T", 0)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _setup(capacity: int = 8, max_attempts: int = 3):
    clock = Clock()
    handoff = Handoff(Leases(clock))
    held = Held()
    pool = HeldPool(handoff, held, "T", GIVE_BACK, max_attempts, capacity, clock)
    return clock, handoff, held, pool


def _batch(offset: int, reconsume_times: int = 0, group: str | None = None) -> ConsumeBatch:
    props = {MESSAGE_GROUP: group} if group else {}
    ext = MessageExt("T", b"b", f"id{offset}", 0, offset, 0, 0, reconsume_times, props)
    return ConsumeBatch(KEY, MessageQueue("T", 0), ProcessQueue(), [ext])


def _outcome(batch: ConsumeBatch) -> tuple[ConsumeConcurrentlyStatus | None, int]:
    assert batch.context is not None
    return batch.status, batch.context.delay_level_when_next_consume


def test_an_acked_lease_finishes_its_batch_as_success_and_leaves_the_snapshot():
    _clock, handoff, held, pool = _setup()
    batch = _batch(5)
    pool.submit([batch])
    (slot,) = handoff.take(1, 0, 30)
    held.add({slot.lease_id: (KEY, 5, 1)})
    assert pool.results() == []  # held
    handoff.leases.ack(slot.handle)
    assert pool.wait(0.0) is True
    assert pool.results() == [batch] and batch.status is SUCCESS
    assert decode(held.add({})) == []


def test_an_expired_lease_is_given_back_at_its_deadline_and_a_changed_one_later():
    clock, handoff, _held, pool = _setup()
    given, changed = _batch(1), _batch(2)
    pool.submit([given, changed])
    _first, second = handoff.take(2, 0, 10)
    pool.results()  # both taken: their deadlines are now known
    clock.now += 9
    second.handle = handoff.leases.change(second.handle, 10)
    clock.now += 1
    assert pool.results() == [given] and _outcome(given) == (LATER, GIVE_BACK)
    clock.now += 8
    assert pool.results() == []
    clock.now += 1
    assert pool.results() == [changed]


def test_an_expired_fifo_message_is_offered_again_in_place_then_dead_lettered():
    clock, handoff, _held, pool = _setup(max_attempts=2)
    batch = _batch(1, group="g")
    pool.submit([batch])
    handoff.take(1, 0, 10)
    pool.results()
    clock.now += 10
    assert pool.results() == []  # offered again: attempt 2 of 2
    (again,) = handoff.take(1, 0, 10)
    assert again.message.reconsume_times == 1
    pool.results()
    clock.now += 10
    assert pool.results() == [batch] and _outcome(batch) == (LATER, DLQ_NOW)


def test_a_message_whose_attempts_a_dead_member_used_up_is_dead_lettered_untaken():
    _clock, handoff, _held, pool = _setup(max_attempts=3)
    batch = _batch(1, reconsume_times=3)
    pool.submit([batch])
    assert pool.results() == [batch] and _outcome(batch) == (LATER, DLQ_NOW)
    assert handoff.waiting() == 0


def test_only_capacity_messages_are_parked_the_rest_wait_in_the_backlog():
    _clock, handoff, _held, pool = _setup(capacity=2)
    batches = [_batch(i) for i in range(3)]
    pool.submit(batches)
    assert (handoff.waiting(), pool.backlog()) == (2, 1)
    (slot,) = handoff.take(1, 0, 10)
    pool.results()
    handoff.leases.ack(slot.handle)
    assert pool.results() == [batches[0]]
    assert (handoff.waiting(), pool.backlog()) == (2, 0)


def test_a_waiting_batch_of_a_revoked_partition_is_never_parked():
    _clock, handoff, _held, pool = _setup(capacity=1)
    first, revoked = _batch(1), _batch(2)
    pool.submit([first, revoked])
    revoked.pq.dropped = True
    (slot,) = handoff.take(1, 0, 10)
    handoff.leases.ack(slot.handle)
    assert pool.results() == [first, revoked]
    assert revoked.status is None and handoff.waiting() == 0


def test_a_closed_topic_gives_back_parked_and_held_messages():
    _clock, handoff, _held, pool = _setup()
    parked, taken = _batch(1), _batch(2)
    pool.submit([taken, parked])
    handoff.take(1, 0, 10)
    pool.results()
    handoff.abandon("T")
    done = pool.results()
    assert sorted(b.messages[0].queue_offset for b in done) == [1, 2]
    assert all(_outcome(b) == (LATER, GIVE_BACK) for b in done)
