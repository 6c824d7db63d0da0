"""Settlement of failed messages when their send-back fails: passing vs permanent errors."""

from __future__ import annotations

from batch_kinds import BatchKind
from confluent_kafka import KafkaError
from unit_fakes import ListSink

from rmqcompat.config import ClientConfig
from rmqcompat.consumer.dispatch import ConsumeBatch
from rmqcompat.consumer.listener import ConsumeConcurrentlyContext, ConsumeConcurrentlyStatus
from rmqcompat.consumer.partitions import Partitions
from rmqcompat.consumer.sendback import SendBack
from rmqcompat.consumer.settings import ConsumerSettings
from rmqcompat.consumer.settlement import Settlement, add_success
from rmqcompat.message import MessageExt, MessageQueue
from rmqcompat.trace import Emitter, Tracer

TOO_LARGE = KafkaError(KafkaError.MSG_SIZE_TOO_LARGE, "too large")
BUSY = KafkaError(KafkaError.REQUEST_TIMED_OUT, "timed out")
KEY = ("T", 0)


class Sink:
    """Answers every produce with ``errors[kind]`` (None: accepted); records topics."""

    def __init__(self, errors: dict[str, KafkaError | None]) -> None:
        self.errors = errors
        self.topics: list[str] = []

    def produce(self, record, done) -> None:
        self.topics.append(record.topic)
        kind = "dlq" if ".dlq." in record.topic else "retry"
        done(self.errors[kind])


class Pool:
    def __init__(self) -> None:
        self.submitted: list[ConsumeBatch] = []

    def submit(self, batches) -> None:
        self.submitted += batches


def _settle(sink: Sink):
    settings = ConsumerSettings("g", ClientConfig("127.0.0.1:1"), send_back_failure_delay_s=5)
    partitions = Partitions(settings, lambda offsets, asynchronous: None)
    partitions.add(KEY, MessageQueue("T", 0), 0)
    state = partitions.get(KEY)
    pool, clock = Pool(), [0.0]
    sendback = SendBack(sink, settings.retry_policy(), "", now_ms=lambda: 0)
    settlement = Settlement(settings, sendback, partitions, pool, lambda: clock[0])
    msg = MessageExt("T", b"x", "m1", 0, 0, 0, 0)
    state.pq.add(0, 1)
    batch = ConsumeBatch(KEY, state.queue, state.pq, [msg])
    batch.status = ConsumeConcurrentlyStatus.RECONSUME_LATER
    batch.context = ConsumeConcurrentlyContext(state.queue)
    settlement.track([batch])
    settlement.on_results([batch])
    return settlement, state, pool, clock


def test_a_passing_send_back_failure_is_consumed_again_locally():
    settlement, state, pool, clock = _settle(Sink({"retry": BUSY, "dlq": None}))
    clock[0] = 5.0
    settlement.run_due(clock[0])
    assert 0 in state.pq and len(pool.submitted) == 1  # RocketMQ: consume later, in flight


class ScriptedSink:
    """Answers each produce with the next of ``errors`` (None: accepted), holding each
    answer until :meth:`report` (as librdkafka holds delivery reports until polled)."""

    def __init__(self, errors: list[KafkaError | None]) -> None:
        self.errors = errors
        self.waiting: list[tuple[object, KafkaError | None]] = []

    def produce(self, record, done) -> None:
        self.waiting.append((done, self.errors[len(self.waiting)]))

    def report(self) -> None:
        for done, err in self.waiting:
            done(err)


def test_a_batchs_passing_send_back_failures_are_consumed_again_together_after_its_last_report():
    settings = ConsumerSettings(
        "g",
        ClientConfig("127.0.0.1:1"),
        send_back_failure_delay_s=5,
        consume_message_batch_max_size=3,
    )
    partitions = Partitions(settings, lambda offsets, asynchronous: None)
    partitions.add(KEY, MessageQueue("T", 0), 0)
    state = partitions.get(KEY)
    pool = Pool()
    sink = ScriptedSink([BUSY, None, BUSY])
    sendback = SendBack(sink, settings.retry_policy(), "", now_ms=lambda: 0)
    settlement = Settlement(settings, sendback, partitions, pool, lambda: 0.0)
    msgs = [MessageExt("T", b"x", f"m{i}", 0, i, 0, 0) for i in range(3)]
    for i in range(3):
        state.pq.add(i, 1)
    batch = ConsumeBatch(KEY, state.queue, state.pq, msgs)
    batch.status = ConsumeConcurrentlyStatus.RECONSUME_LATER
    batch.context = ConsumeConcurrentlyContext(state.queue)
    settlement.track([batch])
    settlement.on_results([batch])
    settlement.run_due(5.0)
    assert not pool.submitted  # no report yet
    sink.report()
    assert 1 not in state.pq and 0 in state.pq and 2 in state.pq
    settlement.run_due(5.0)
    assert [[m.msg_id for m in b.messages] for b in pool.submitted] == [["m0", "m2"]]
    assert [m.reconsume_times for m in msgs] == [1, 0, 1]


def test_a_permanent_send_back_failure_goes_to_the_dlq_at_once():
    sink = Sink({"retry": TOO_LARGE, "dlq": None})
    _, state, pool, _ = _settle(sink)
    assert 0 not in state.pq and not pool.submitted
    assert ".dlq." in sink.topics[-1] and not state.stuck


def test_refused_by_the_dlq_too_it_stays_in_flight_reported_and_is_retried_later():
    sink = Sink({"retry": TOO_LARGE, "dlq": TOO_LARGE})
    settlement, state, pool, clock = _settle(sink)
    assert 0 in state.pq and not pool.submitted
    assert list(state.stuck.values()) == [("m1", TOO_LARGE.str())]
    sink.errors["dlq"] = None  # e.g. an operator raised the topic's limit
    clock[0] = 60.0
    settlement.run_due(clock[0])
    assert 0 not in state.pq and not state.stuck


def test_interleaved_results_release_each_partition_and_send_back_only_the_failure(
    batch_kind: BatchKind,
):
    """Results settle in runs per partition: every success leaves its own queue and counts
    for its own partition, a failure between successes goes back alone, and a revoked
    partition's results release nothing."""
    settings = ConsumerSettings("g", ClientConfig("127.0.0.1:1"))
    partitions = Partitions(settings, lambda offsets, asynchronous: None)
    keys = [("T", 0), ("T", 1), ("T", 2)]
    for key in keys:
        partitions.add(key, MessageQueue("T", key[1]), 0)
    sink = Sink({"retry": None, "dlq": None})
    sendback = SendBack(sink, settings.retry_policy(), "", now_ms=lambda: 0)
    settlement = Settlement(settings, sendback, partitions, Pool(), lambda: 0.0)
    revoked = partitions.get(keys[2])
    plan = [(0, 0, True), (0, 1, True), (1, 0, True), (0, 2, False), (0, 3, True), (2, 0, True)]
    plan += [(1, 1, True)]
    batches = []
    for part, offset, ok in plan:
        state = partitions.get(keys[part])
        state.pq.add(offset, 1)
        batch = batch_kind.batch(
            keys[part],
            state.queue,
            state.pq,
            [MessageExt("T", b"x", f"{part}-{offset}", part, offset, 0, 0)],
        )
        batch.status = (
            ConsumeConcurrentlyStatus.CONSUME_SUCCESS
            if ok
            else ConsumeConcurrentlyStatus.RECONSUME_LATER
        )
        batch.context = batch_kind.context(state.queue)
        batches.append(batch)
    settlement.track(batches)
    partitions.drop([keys[2]], commit=False)
    settlement.on_results(batches)
    p0, p1 = partitions.get(keys[0]), partitions.get(keys[1])
    assert p0.pq.count == 0 and p1.pq.count == 0  # the failure was sent back (accepted)
    assert (p0.consume_ok, p0.consume_failed) == (3, 1)
    assert (p1.consume_ok, p1.consume_failed) == (2, 0)
    assert len(sink.topics) == 1  # the one failure, sent back once
    assert revoked.pq.count == 1 and revoked.consume_ok == 0
    assert settlement.running() == 0 and p0.pq.commit_offset() == 4


def test_the_calls_of_one_round_and_their_send_backs_are_traced_with_three_appends(
    batch_kind: BatchKind,
):
    settings = ConsumerSettings("g", ClientConfig("127.0.0.1:1"))
    partitions = Partitions(settings, lambda offsets, asynchronous: None)
    partitions.add(KEY, MessageQueue("T", 0), 0)
    state = partitions.get(KEY)
    traces = ListSink()
    tracer = Tracer(traces, Emitter("c", "", lambda: 1))
    sendback = SendBack(
        Sink({"retry": None, "dlq": None}), settings.retry_policy(), "", tracer=tracer
    )
    settlement = Settlement(settings, sendback, partitions, Pool(), lambda: 0.0)
    batches = []
    for offset, status in enumerate(["ok", "ok", "later", "ok", "later"]):
        state.pq.add(offset, 1)
        batch = batch_kind.batch(
            KEY, state.queue, state.pq, [MessageExt("T", b"x", f"m{offset}", 0, offset, 0, 0)]
        )
        batch.status = (
            ConsumeConcurrentlyStatus.RECONSUME_LATER
            if status == "later"
            else ConsumeConcurrentlyStatus.CONSUME_SUCCESS
        )
        batch.context = batch_kind.context(state.queue)
        batches.append(batch)
    settlement.track(batches)
    settlement.on_results(batches)
    consumed = [e for e in traces.events if e["event"] == "CONSUME"]
    assert sorted((e["msg_id"], e["status"]) for e in consumed) == [
        ("m0", "SUCCESS"),
        ("m1", "SUCCESS"),
        ("m2", "RECONSUME_LATER"),
        ("m3", "SUCCESS"),
        ("m4", "RECONSUME_LATER"),
    ]
    sent_back = [e["msg_id"] for e in traces.events if e["event"] == "SEND_BACK"]
    assert sorted(sent_back) == ["m2", "m4"]
    # the three successes in one append, the two failures in another, their send-backs
    # (stored at once by this sink) in a third
    assert traces.appends == 3


def test_traced_calls_of_one_duration_share_an_entry_and_no_batch_list_grows():
    first, second, third = ([MessageExt("T", b"x", f"m{i}", 0, i, 0, 0)] for i in range(3))
    succeeded: list[tuple[list[MessageExt], int]] = []
    add_success(succeeded, first, 0)
    add_success(succeeded, second, 0)
    add_success(succeeded, third, 2)
    assert succeeded == [(first + second, 0), (third, 2)]
    assert len(first) == 1 and succeeded[1][0] is not third
