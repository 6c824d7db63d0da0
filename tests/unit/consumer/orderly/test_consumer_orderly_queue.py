"""The head of an orderly partition: batches from the head, put back in offset order,
one batch at a time."""

from __future__ import annotations

from rmqcompat.consumer.orderly.queue import OrderlyQueue
from rmqcompat.message import MessageExt
from rmqcompat.process_queue import ProcessQueue


def _msgs(*offsets: int) -> list[MessageExt]:
    return [MessageExt("T", b"x", f"m{o}", 0, o, 0, 0) for o in offsets]


def _offsets(msgs: list[MessageExt]) -> list[int]:
    return [m.queue_offset for m in msgs]


def test_batches_come_from_the_head_up_to_the_batch_size():
    queue = OrderlyQueue(ProcessQueue())
    queue.append(_msgs(0, 1, 2, 3, 4))
    assert _offsets(queue.take(2)) == [0, 1]
    queue.done()
    assert _offsets(queue.take(10)) == [2, 3, 4]
    queue.done()
    assert queue.take(3) == [] and not queue.busy


def test_only_one_batch_at_a_time():
    queue = OrderlyQueue(ProcessQueue())
    queue.append(_msgs(0, 1))
    assert queue.ready()
    queue.take(1)
    assert queue.busy and not queue.ready()
    queue.done()
    assert queue.ready()


def test_a_suspended_batch_is_put_back_at_the_head_in_offset_order_and_stays_taken():
    queue = OrderlyQueue(ProcessQueue())
    queue.append(_msgs(0, 1, 2, 3))
    batch = queue.take(3)
    queue.append(_msgs(4))
    queue.put_back([batch[2], batch[0]])  # message 1 was dead-lettered
    assert queue.busy and not queue.ready()
    queue.done()
    assert _offsets(queue.take(10)) == [0, 2, 3, 4]


def test_a_dropped_or_closed_partition_starts_nothing():
    pq = ProcessQueue()
    queue = OrderlyQueue(pq)
    queue.append(_msgs(0))
    queue.closed = True
    assert not queue.ready()
    queue.closed = False
    pq.dropped = True
    assert not queue.ready()
    assert len(queue) == 1
