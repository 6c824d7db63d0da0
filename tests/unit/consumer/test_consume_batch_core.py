"""The core's batch, context and the functions on them, against their Python references.

The core's ``ConsumeBatch`` and ``ConsumeConcurrentlyContext`` are built for every listener
call; they must read and change like the Python classes, and stay out of the cyclic
collector's sight only while nothing they hold can lead back to them.
"""

from __future__ import annotations

import gc
import weakref
from typing import Any
from unittest import mock

import pytest
from batch_kinds import KINDS, batch_kind
from compiled_core import compiled_core
from confluent_kafka import Message
from hypothesis import given, settings
from hypothesis import strategies as st

from rmqcompat.consumer import dispatch, settlement
from rmqcompat.consumer.listener import MAX_INT, ConsumeConcurrentlyStatus, ConsumeOrderlyStatus
from rmqcompat.errors import ListenerKindError
from rmqcompat.message import MessageExt, MessageQueue
from rmqcompat.process_queue import ProcessQueue
from rmqcompat.properties import CONSUME_START_TIME
from rmqcompat.trace import bulk

KEY = ("t", 0)
QUEUE = MessageQueue("T", 0)
SUCCESS = ConsumeConcurrentlyStatus.CONSUME_SUCCESS
LATER = ConsumeConcurrentlyStatus.RECONSUME_LATER
FIELDS = ("started_at", "finished_at", "expired", "status", "context", "raised", "refused")


def _messages(counts: list[int]) -> list[MessageExt]:
    return [MessageExt("T", b"x", f"m{i}", 0, i, 0, 0, n) for i, n in enumerate(counts)]


def _shape(batch: Any) -> tuple[Any, ...]:
    """A batch as comparable values: what it holds (by identity) and its fields."""
    return (
        batch.key,
        batch.queue,
        id(batch.pq),
        [id(m) for m in batch.messages],
        batch.stored,
        *(getattr(batch, name) for name in FIELDS),
    )


@given(st.lists(st.integers(0, 20), max_size=7), st.integers(1, 4))
def test_batches_are_cut_the_same_compiled_and_pure(counts: list[int], size: int) -> None:
    msgs, pq = _messages(counts), ProcessQueue()
    pure: list[Any] = []
    compiled: list[Any] = []
    dispatch.add_batches(KEY, QUEUE, pq, msgs, size, pure)
    compiled_core().add_batches(KEY, QUEUE, pq, msgs, size, compiled)
    assert [_shape(b) for b in compiled] == [_shape(b) for b in pure]
    assert all(type(b) is compiled_core().ConsumeBatch for b in compiled)


def test_a_batch_of_no_messages_is_refused_compiled_and_pure() -> None:
    for add in (dispatch.add_batches, compiled_core().add_batches):
        with pytest.raises(ValueError, match="at least one message"):
            add(KEY, QUEUE, ProcessQueue(), _messages([0]), 0, [])


@pytest.mark.parametrize("kind", KINDS)
def test_a_batch_is_built_with_its_stored_counts_given_or_read(kind: str) -> None:
    make = batch_kind(kind).batch
    msgs = _messages([3, 5])
    assert make(KEY, QUEUE, ProcessQueue(), msgs).stored == (3, 5)
    assert make(KEY, QUEUE, ProcessQueue(), msgs, (1, 2)).stored == (1, 2)
    batch = make(KEY, QUEUE, ProcessQueue(), msgs)
    for name, value in zip(FIELDS, (1.5, 2.5, True, LATER, None, True, None), strict=True):
        setattr(batch, name, value)
        assert getattr(batch, name) == value


@pytest.mark.parametrize("dropped", [False, True])
@pytest.mark.parametrize("expired", [False, True])
def test_a_batch_starts_the_same_compiled_and_pure(dropped: bool, expired: bool) -> None:
    outcomes = []
    for kind in KINDS:
        pq = ProcessQueue()
        pq.dropped = dropped
        msgs = _messages([0, 1])
        batch = batch_kind(kind).batch(KEY, QUEUE, pq, msgs)
        batch.expired = expired
        call = batch.start(7.5, "1700000000123")
        assert isinstance(batch.context, batch_kind(kind).context)
        given = None
        if call is not None:
            listed, context = call
            assert context is batch.context
            given = [m is x for m, x in zip(listed, msgs, strict=True)]
            listed.clear()  # the listener's list is a copy
            assert len(batch.messages) == 2
        stamps = [m.properties.get(CONSUME_START_TIME) for m in msgs]
        outcomes.append((given, batch.started_at, stamps, batch.context.ack_index))
    assert outcomes[0] == outcomes[1]
    assert (outcomes[0][0] is None) == (dropped or expired)


def _use_context(context: Any) -> list[Any]:
    """What a listener can do with a context, and what it reads back meanwhile."""
    seen = [context.ack_index, context.delay_level_when_next_consume, context.marked, repr(context)]
    context.ack_index = 3
    context.delay_level_when_next_consume = -1
    seen += [context.failed_indexes, context.marked, repr(context)]
    context.fail(2)
    context.fail(0)
    seen += [context.failed_indexes, repr(context)]
    context.failed_indexes = {9}
    seen += [context.marked, context.message_queue, repr(context)]
    return seen


def _copy(indexes: set[int] | None) -> set[int] | None:
    return None if indexes is None else set(indexes)


@pytest.mark.parametrize("given_indexes", [None, {1}])
def test_a_context_behaves_the_same_compiled_and_pure(given_indexes: set[int] | None) -> None:
    seen = [
        _use_context(batch_kind(kind).context(QUEUE, failed_indexes=_copy(given_indexes)))
        for kind in KINDS
    ]
    assert seen[0] == seen[1]
    assert seen[0][0] == MAX_INT


#: One batch of a settle round: its partition, status, ackIndex, marked failures, whether
#: it is still running, its listener's start and end, and its number of messages.
BATCH = st.tuples(
    st.sampled_from([0, 1]),
    st.sampled_from([SUCCESS, SUCCESS, SUCCESS, LATER, None]),
    st.sampled_from([MAX_INT, MAX_INT, 0, 1, -1]),
    st.sampled_from([None, None, set(), {0}]),
    st.booleans() | st.just(True),
    st.sampled_from([(None, None), (1.0, None), (1.0, 1.25), (1.0, 31.0), (2.0, 32.0)]),
    st.integers(1, 3),
)


def _settled(
    kind: str, plan: list[Any], start: int, tracing: bool, kept: Any = None
) -> tuple[Any, ...]:
    """What ``settle_successes`` of ``kind`` does with ``plan``'s batches (the core's
    writing the events of what succeeded to ``kept``, if given)."""
    made = batch_kind(kind)
    settle = settlement.settle_successes if kind == "python" else compiled_core().settle_successes
    queues = [ProcessQueue(), ProcessQueue()]
    batches, running = [], {}
    for i, (part, status, ack, marked, is_running, (began, ended), size) in enumerate(plan):
        batch = made.batch(KEY, QUEUE, queues[part], _messages([i] * size))
        batch.status, batch.started_at, batch.finished_at = status, began, ended
        if status is not None:
            batch.context = made.context(QUEUE, ack, failed_indexes=marked)
        if is_running:
            running[batch] = True
        batches.append(batch)
    acked: list[int] = []
    succeeded: list[Any] | None = [] if tracing else None
    pq = queues[plan[0][0]]
    extra = () if kept is None else (kept,)
    result = settle(batches, start, pq, running, 30.0, acked, succeeded, *extra)
    left = [batches.index(b) for b in running]
    traced = None if succeeded is None else [(list(ms), t) for ms, t in succeeded]
    return result, left, acked, traced


def _ids(traced: list[Any] | None) -> list[Any] | None:
    return None if traced is None else [([m.msg_id for m in ms], t) for ms, t in traced]


@settings(max_examples=300)
@given(st.lists(BATCH, min_size=1, max_size=8), st.integers(0, 3), st.booleans())
def test_successes_settle_the_same_compiled_and_pure(
    plan: list[Any], start: int, tracing: bool
) -> None:
    start = min(start, len(plan))
    *compiled, compiled_traced = _settled("compiled", plan, start, tracing)
    *reference, reference_traced = _settled("python", plan, start, tracing)
    assert compiled == reference
    assert _ids(compiled_traced) == _ids(reference_traced)


@settings(max_examples=200)
@given(st.lists(BATCH, min_size=1, max_size=8), st.integers(0, 3))
def test_the_cores_settle_writes_the_events_of_what_succeeded_as_the_reference_encodes_them(
    plan: list[Any], start: int
) -> None:
    """Given a ``ConsumeEvents``, the core's settle writes there the CONSUME events of the
    calls that succeeded whole (messages without kept fields: encoded at once), in order,
    and leaves nothing to the Python encoder; the events are the pure encoder's of what
    the reference settles."""
    start = min(start, len(plan))
    who, at_ms = bulk.identity("c", "h", "ns"), 1_700_000_000_000
    kept = compiled_core().ConsumeEvents(bulk.consume_head(who, at_ms, "G"), bulk.SUCCESS)
    *compiled, left_over = _settled("compiled", plan, start, True, kept)
    *reference, succeeded = _settled("python", plan, start, True)
    assert compiled == reference
    assert left_over == []
    calls = [(msgs, (), ms, "RECONSUME_LATER", None) for msgs, ms in succeeded]
    with mock.patch.object(bulk, "_consume_calls", bulk.consume_calls):  # pure Python
        expected = bulk.consumed_calls(who, at_ms, "G", calls)
    written = kept.take()
    assert list(written) == list(expected)
    assert written.noted == 0  # no message here came through the direct fetch


def test_the_core_settles_a_run_of_successes_itself() -> None:
    """The core takes a run itself (stopping at once would leave it all to the loop),
    counts a call that took the consume timeout or longer, and traces calls of the same
    duration in one entry."""
    plan = [(0, SUCCESS, MAX_INT, None, True, (1.0, 31.0), 2)] * 3
    plan += [(0, LATER, MAX_INT, None, True, (1.0, 2.0), 1)]
    result, left, acked, traced = _settled("compiled", plan, 0, True)
    assert result == (3, 3) and left == [3]
    assert acked == [0, 1, 0, 1, 0, 1]
    assert _ids(traced) == [(["m0", "m1"] * 3, 30000)]


def test_the_cores_settle_leaves_a_python_batch_to_the_loop() -> None:
    batch = dispatch.ConsumeBatch(KEY, QUEUE, ProcessQueue(), _messages([0]))
    batch.status, batch.context = SUCCESS, compiled_core().ConsumeConcurrentlyContext(QUEUE)
    running = {batch: True}
    assert compiled_core().settle_successes([batch], 0, batch.pq, running, 30.0, [], None) == (0, 0)
    assert running == {batch: True}


def test_the_cores_batch_and_context_stay_out_of_the_collectors_sight_until_needed() -> None:
    core = compiled_core()
    batch = core.ConsumeBatch(KEY, QUEUE, ProcessQueue(), _messages([0]))
    context = core.ConsumeConcurrentlyContext(QUEUE)
    batch.context = context
    assert not gc.is_tracked(batch) and not gc.is_tracked(context)
    batch.refused = None
    assert not gc.is_tracked(batch)
    batch.refused = ListenerKindError("orderly status from a concurrent listener")
    assert gc.is_tracked(batch)
    assert context.failed_indexes == set() and gc.is_tracked(context)
    assert gc.is_tracked(core.ConsumeConcurrentlyContext(QUEUE, failed_indexes={1}))


class _Marker:
    """A weakly referable object to see whether a cycle was freed."""


def _refuse(batch: Any, marker: _Marker) -> None:
    raise ListenerKindError("orderly status from a concurrent listener")


def test_a_refused_batch_in_a_cycle_with_its_exception_is_freed() -> None:
    """The refusal's traceback holds the frame that holds the batch: only the collector can
    free that cycle, so it must see the batch."""
    batch = compiled_core().ConsumeBatch(KEY, QUEUE, ProcessQueue(), _messages([0]))
    marker = _Marker()
    freed = weakref.ref(marker)
    try:
        _refuse(batch, marker)
    except ListenerKindError as exc:
        batch.refused = exc
    del batch, marker
    gc.collect()
    assert freed() is None


def test_a_context_in_a_cycle_through_its_failed_indexes_is_freed() -> None:
    context = compiled_core().ConsumeConcurrentlyContext(QUEUE)
    marker = _Marker()
    freed = weakref.ref(marker)
    context.failed_indexes = {marker, context}  # not indexes, but it must not leak
    del context, marker
    gc.collect()
    assert freed() is None


def test_a_message_the_core_decodes_stays_out_of_the_collectors_sight() -> None:
    record = Message(topic="t", partition=2, offset=41, value=b"v", headers=[("UNIQ_KEY", b"A")])
    decoded = compiled_core().plain_decode(record, "t", "T", 2, 41)
    assert isinstance(decoded, MessageExt) and not gc.is_tracked(decoded)


#: What a listener answers: each status, nothing, a foreign value, an exception, and the
#: other consume mode's status (refused: the poll thread stops the consumer on it).
ANSWERS = [SUCCESS, LATER, None, "yes", ValueError("boom"), ConsumeOrderlyStatus.SUCCESS]


def _answering(answer: object) -> Any:
    def listener(msgs: list[MessageExt], context: Any) -> object:
        context.ack_index = len(msgs) - 1
        if isinstance(answer, BaseException):
            raise answer
        return answer

    return listener


def _runner(kind: str) -> type[dispatch.BatchRunner]:
    return dispatch.BatchRunner if kind == "python" else compiled_core().BatchRunner  # type: ignore[no-any-return]


@pytest.mark.parametrize("answer", ANSWERS, ids=repr)
def test_a_listener_call_runs_the_same_compiled_and_pure(
    answer: object, caplog: pytest.LogCaptureFixture
) -> None:
    """The core's runner against the Python one, on either kind of batch: the batch's
    result, times and stamps, and what is logged."""
    outcomes, listener = [], _answering(answer)
    for runner, batch in [("python", "python"), ("compiled", "compiled"), ("compiled", "python")]:
        clock = iter([10.0, 10.25]).__next__
        run = _runner(runner)(listener, "g", clock, lambda: 1700000000123)
        msgs = _messages([0, 0])
        made = batch_kind(batch).batch(KEY, QUEUE, ProcessQueue(), msgs)
        caplog.clear()
        reported = run(made)
        refused = made.refused
        outcomes.append(
            (
                reported,
                made.status,
                made.raised,
                None if refused is None else (type(refused), str(refused)),
                made.started_at,
                made.finished_at,
                made.context.ack_index,
                [m.properties[CONSUME_START_TIME] for m in msgs],
                [(r.levelname, r.getMessage(), r.exc_info is not None) for r in caplog.records],
            )
        )
    assert outcomes[1] == outcomes[0] and outcomes[2] == outcomes[0]


@pytest.mark.parametrize("kind", KINDS)
def test_the_wall_clock_is_read_again_only_a_millisecond_on(kind: str) -> None:
    """RocketMQ stamps each call with the wall clock; the text is reused for calls that
    start within ``STAMP_REUSE_S`` of its reading."""
    clock = iter([1.0, 1.0, 1.0009, 1.0009, 1.001, 1.001]).__next__
    run = _runner(kind)(_answering(SUCCESS), "g", clock, iter([5, 6, 7]).__next__)
    stamps = []
    for _ in range(3):
        msgs = _messages([0])
        run(batch_kind(kind).batch(KEY, QUEUE, ProcessQueue(), msgs))
        stamps.append(msgs[0].properties[CONSUME_START_TIME])
    assert stamps == ["5", "5", "6"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_batch_not_to_run_is_reported_without_calling_the_listener(kind: str) -> None:
    calls: list[int] = []
    run = _runner(kind)(lambda m, c: calls.append(1), "g", lambda: 1.0, lambda: 5)
    pq = ProcessQueue()
    pq.dropped = True
    batch = batch_kind(kind).batch(KEY, QUEUE, pq, _messages([0]))
    assert run(batch) is True
    assert calls == [] and batch.status is None and batch.finished_at is None


def test_an_interrupt_in_the_listener_is_not_taken_for_its_answer() -> None:
    """Only an ``Exception`` counts as RECONSUME_LATER, as in ``invoke``."""
    for kind in KINDS:
        run = _runner(kind)(_answering(KeyboardInterrupt()), "g", lambda: 1.0, lambda: 5)
        batch = batch_kind(kind).batch(KEY, QUEUE, ProcessQueue(), _messages([0]))
        with pytest.raises(KeyboardInterrupt):
            run(batch)
