"""RocketMQ details of the consumer side (issue 7 item 4): the stored reconsume count after
a failed send-back, CONSUME_START_TIME, consume stats, ``max_reconsume_times=-1`` and empty
tags in a subscription expression."""

from __future__ import annotations

from confluent_kafka import KafkaError

from rmqcompat import properties as props
from rmqcompat.clock import epoch_ms
from rmqcompat.config import ClientConfig
from rmqcompat.consumer.dispatch import ConsumeBatch, WorkerPool
from rmqcompat.consumer.listener import ConsumeConcurrentlyContext, ConsumeConcurrentlyStatus
from rmqcompat.consumer.partitions import Partitions
from rmqcompat.consumer.sendback import SendBack
from rmqcompat.consumer.settings import ConsumerSettings
from rmqcompat.consumer.settlement import Settlement
from rmqcompat.consumer.tag_filter import TagFilter
from rmqcompat.message import MessageExt, MessageQueue

OK = ConsumeConcurrentlyStatus.CONSUME_SUCCESS
LATER = ConsumeConcurrentlyStatus.RECONSUME_LATER
BUSY = KafkaError(KafkaError.REQUEST_TIMED_OUT, "timed out")
KEY = ("T", 0)
LEVELS = "1s 2s 3s 4s 5s 6s"


class Sink:
    """Answers produces with ``errors`` in turn (None: accepted), then accepts; records them."""

    def __init__(self, errors: list[KafkaError | None]) -> None:
        self.errors = errors
        self.records: list = []

    def produce(self, record, done) -> None:
        self.records.append(record)
        done(self.errors.pop(0) if self.errors else None)


class Pool:
    def __init__(self) -> None:
        self.submitted: list[ConsumeBatch] = []

    def submit(self, batches) -> None:
        self.submitted += batches


def _settlement(sink: Sink, **settings):
    settings = ConsumerSettings(
        "g", ClientConfig("127.0.0.1:1", "", LEVELS), send_back_failure_delay_s=5, **settings
    )
    partitions = Partitions(settings, lambda offsets, asynchronous: None)
    partitions.add(KEY, MessageQueue("T", 0), 0)
    pool, clock = Pool(), [0.0]
    sendback = SendBack(sink, settings.retry_policy(), "", now_ms=lambda: 0)
    return Settlement(settings, sendback, partitions, pool, lambda: clock[0]), partitions, pool


def _finish(batch: ConsumeBatch, status, ack_index: int | None = None, took: float | None = None):
    """What a worker leaves on a batch whose listener returned ``status``."""
    batch.context = ConsumeConcurrentlyContext(batch.queue)
    if ack_index is not None:
        batch.context.ack_index = ack_index
    batch.status = status
    if took is not None:
        batch.started_at, batch.finished_at = 0.0, took
    return batch


def _batch(
    partitions: Partitions, count: int, reconsume_times: int = 0, first: int = 0
) -> ConsumeBatch:
    state = partitions.get(KEY)
    offsets = range(first, first + count)
    msgs = [MessageExt("T", b"x", f"m{i}", 0, i, 0, 0, reconsume_times) for i in offsets]
    for msg in msgs:
        state.pq.add(msg.queue_offset, 1)
    return ConsumeBatch(KEY, state.queue, state.pq, msgs)


def test_after_a_failed_send_back_the_listener_sees_plus_one_but_routing_uses_the_stored_count():
    sink = Sink([BUSY])
    settlement, partitions, pool = _settlement(sink)
    batch = _batch(partitions, 1, reconsume_times=2)
    settlement.track([batch])
    settlement.on_results([_finish(batch, LATER)])
    settlement.run_due(5.0)
    [again] = pool.submitted
    assert again.messages[0].reconsume_times == 3  # the listener sees the local +1
    settlement.on_results([_finish(again, LATER)])
    sent = props.from_headers(sink.records[-1].headers)
    # the broker's decision: stored count 2 -> level 3 + 2, and 2 + 1 reconsumes
    assert (sent[props.DELAY], sent[props.RECONSUME_TIME]) == ("5", "3")


def test_send_back_after_a_failed_send_back_dead_letters_by_the_stored_count():
    sink = Sink([BUSY])
    settlement, partitions, pool = _settlement(sink, max_reconsume_times=3)
    batch = _batch(partitions, 1, reconsume_times=2)
    settlement.track([batch])
    settlement.on_results([_finish(batch, LATER)])
    settlement.run_due(5.0)
    [again] = pool.submitted
    settlement.on_results([_finish(again, LATER)])
    assert ".dlq." not in sink.records[-1].topic  # stored 2 < 3: one more retry, not the DLQ


def test_consume_start_time_is_set_before_the_listener_runs():
    seen: list[str | None] = []

    def listener(msgs, ctx):
        seen.extend(m.get_property(props.CONSUME_START_TIME) for m in msgs)
        return OK

    pool = WorkerPool(listener, "g", 1, lambda: 0.0)
    try:
        _, partitions, _ = _settlement(Sink([]))
        before = epoch_ms()
        pool.submit([_batch(partitions, 2)])
        pool.wait(5.0)
        after = epoch_ms()
        assert pool.results() and len(seen) == 2 and seen[0] == seen[1]
        assert before <= int(seen[0] or "-1") <= after  # epoch ms, as RocketMQ's
    finally:
        pool.shutdown()


def test_consume_start_time_does_not_travel_with_a_sent_back_message():
    sink = Sink([])
    settlement, partitions, _ = _settlement(sink)
    batch = _batch(partitions, 1)
    batch.messages[0].properties[props.CONSUME_START_TIME] = "1234"
    settlement.track([batch])
    settlement.on_results([_finish(batch, LATER)])
    assert props.CONSUME_START_TIME not in props.from_headers(sink.records[0].headers)


def test_stats_count_ok_and_failed_by_ack_index_and_time_outs():
    settlement, partitions, _ = _settlement(Sink([]), consume_timeout=1)
    first, second = _batch(partitions, 3), _batch(partitions, 2, first=3)
    settlement.track([first, second])
    settlement.on_results(
        [_finish(first, OK, ack_index=0, took=1.0), _finish(second, LATER, took=60.0)]
    )
    stats = partitions.stats()[KEY]
    # ok = ack_index + 1, failed = len(batch) - ok; a RECONSUME_LATER fails the whole batch
    assert (stats["consume_ok"], stats["consume_failed"]) == (1, 2 + 2)
    assert stats["consume_timeouts"] == 1  # the 60 s listener call of a 1 min timeout


def test_max_reconsume_times_minus_one_means_16():
    settings = ConsumerSettings("g", ClientConfig("127.0.0.1:1"), max_reconsume_times=-1)
    assert settings.retry_policy().max_reconsume_times == 16


def test_empty_tags_in_an_expression_are_dropped():
    parsed = TagFilter.parse("A || ")
    assert parsed.tags == frozenset({"A"})
    assert parsed.matches("A") and not parsed.matches("")


def test_a_listener_that_stores_a_non_text_property_cannot_stop_the_poll_thread():
    sink = Sink([])
    settlement, partitions, _ = _settlement(sink)
    batch = _batch(partitions, 1)
    batch.messages[0].properties["user"] = 42  # type: ignore[assignment]
    settlement.track([batch])
    settlement.on_results([_finish(batch, LATER)])  # refused for good: stuck, visible
    assert not sink.records and list(partitions.get(KEY).stuck) == [0]
