"""The concurrent consume service behind the engine's seam: batches of a partition reach
the listener at most ``consume_message_batch_max_size`` at a time, and settle by ackIndex
(successes leave the process queue, failures are sent back before they do)."""

from __future__ import annotations

import time

from unit_fakes import AcceptingSink

from rmqcompat.config import ClientConfig
from rmqcompat.consumer.concurrent import ConcurrentConsumeService
from rmqcompat.consumer.dispatch import WorkerPool
from rmqcompat.consumer.listener import ConsumeConcurrentlyStatus
from rmqcompat.consumer.partitions import Partitions
from rmqcompat.consumer.sendback import SendBack
from rmqcompat.consumer.settings import ConsumerSettings
from rmqcompat.message import MessageExt, MessageQueue

KEY = ("T", 0)
OK = ConsumeConcurrentlyStatus.CONSUME_SUCCESS
LATER = ConsumeConcurrentlyStatus.RECONSUME_LATER


def _service(listener, batch_size: int):
    settings = ConsumerSettings(
        "g", ClientConfig("127.0.0.1:1"), consume_message_batch_max_size=batch_size
    )
    partitions = Partitions(settings, lambda offsets, asynchronous: None)
    partitions.add(KEY, MessageQueue("T", 0), 0)
    sink = AcceptingSink()
    sendback = SendBack(sink, settings.retry_policy(), "", now_ms=lambda: 0)
    pool = WorkerPool(listener, "g", 2, time.monotonic)
    service = ConcurrentConsumeService(settings, pool, sendback, partitions, time.monotonic)
    return service, partitions.get(KEY), sink


def _messages(state, count: int) -> list[MessageExt]:
    msgs = [MessageExt("T", b"x", f"m{i}", 0, i, 0, 0) for i in range(count)]
    for msg in msgs:
        state.pq.add(msg.queue_offset, 1)
    return msgs


def _settle_all(service) -> None:
    deadline = time.monotonic() + 10
    while service.busy() and time.monotonic() < deadline:
        service.wait(0.05)
        service.settle()
    assert not service.busy() and service.quiet()


def test_batches_reach_the_listener_at_most_batch_size_at_a_time_and_settle():
    sizes: list[int] = []
    service, state, sink = _service(lambda msgs, ctx: sizes.append(len(msgs)) or OK, 2)
    msgs = _messages(state, 5)

    service.submit({KEY: msgs})
    _settle_all(service)

    assert sorted(sizes) == [1, 2, 2]
    assert all(m.queue_offset not in state.pq for m in msgs)
    assert sink.topics == []
    service.shutdown()


def test_a_failed_batch_is_sent_back_before_it_leaves_the_process_queue():
    service, state, sink = _service(lambda msgs, ctx: LATER, 1)
    msgs = _messages(state, 2)

    service.submit({KEY: msgs})
    _settle_all(service)

    assert all(m.queue_offset not in state.pq for m in msgs)
    assert len(sink.topics) == 2 and all(".delay." in t for t in sink.topics)
    service.shutdown()
