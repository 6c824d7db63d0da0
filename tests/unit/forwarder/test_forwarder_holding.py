"""Per-partition hold caps: when a partition is full (records or bytes) and when it resumes;
holding a run of records, with the Python reference and the compiled core alike."""

import itertools
from collections import deque
from collections.abc import Callable
from typing import Any

import pytest
from compiled_core import compiled_core
from confluent_kafka import KafkaError, Message
from hypothesis import given, settings
from hypothesis import strategies as st

from rmqcompat.errors import ConfigError
from rmqcompat.forwarder import DelayForwarder
from rmqcompat.forwarder.holding import (
    DEFAULT_MAX_HELD,
    DEFAULT_MAX_HELD_BYTES,
    HeldRecords,
    HoldLimits,
    hold_run,
    record_size,
)
from rmqcompat.process_queue import ProcessQueue

LIMITS = HoldLimits(max_records=10, max_bytes=1000)


_offsets = itertools.count()


def record(value: bytes | None = b"", key: bytes | None = None, headers=None) -> Message:
    """A record of t[0] at the next offset."""
    return Message(
        topic="t", partition=0, offset=next(_offsets), value=value, key=key, headers=headers
    )


def hold(held: HeldRecords, *msgs: Message) -> None:
    """Hold ``msgs`` (records of t[0]) as the forward loop does, in one run."""
    assert held.hold_run(list(msgs), 0, ("t", 0), ProcessQueue()) == (len(msgs), False)


def test_defaults_hold_rate_times_delay_of_ordinary_traffic_within_rocketmq_size_cap() -> None:
    # 1s level at 1,250 msg/s per partition must fit; RocketMQ allows 100 MiB per queue.
    assert DEFAULT_MAX_HELD == 10_000
    assert DEFAULT_MAX_HELD_BYTES == 64 * 1024 * 1024
    assert HoldLimits() == HoldLimits(DEFAULT_MAX_HELD, DEFAULT_MAX_HELD_BYTES)


@pytest.mark.parametrize(
    ("records", "size", "full"),
    [
        (0, 0, False),
        (0, 5000, False),  # an empty partition always admits its next record
        (9, 999, False),
        (10, 0, True),  # record cap
        (1, 1000, True),  # byte cap, reached by a single large record
        (3, 1500, True),
        (11, 2000, True),
    ],
)
def test_full_when_either_cap_is_reached(records: int, size: int, full: bool) -> None:
    assert LIMITS.full(records, size) is full


@pytest.mark.parametrize(
    ("records", "size", "resume"),
    [
        (0, 0, True),
        (5, 500, True),  # both at half: resume
        (6, 0, False),  # records above half
        (0, 501, False),  # bytes above half
        (9, 999, False),  # below the caps but above half: stay paused (hysteresis)
    ],
)
def test_resume_only_when_both_counts_are_down_to_half(
    records: int, size: int, resume: bool
) -> None:
    assert LIMITS.may_resume(records, size) is resume


def test_a_cap_of_one_record_resumes_only_when_empty() -> None:
    limits = HoldLimits(max_records=1)
    assert limits.full(1, 1)
    assert not limits.may_resume(1, 1)
    assert limits.may_resume(0, 0)


@pytest.mark.parametrize("kwargs", [{"max_records": 0}, {"max_bytes": 0}, {"max_bytes": -1}])
def test_caps_below_one_are_config_errors(kwargs: dict) -> None:
    with pytest.raises(ConfigError):
        HoldLimits(**kwargs)


@pytest.mark.parametrize(
    "kwargs", [{"max_held_per_partition": 0}, {"max_held_bytes_per_partition": 0}]
)
def test_forwarder_rejects_bad_caps_before_any_io(kwargs: dict) -> None:
    with pytest.raises(ConfigError):
        DelayForwarder("127.0.0.1:1", **kwargs)


def test_record_size_counts_value_key_and_headers() -> None:
    headers = [("DUE_TIME", b"1700000000000"), ("empty", None)]
    msg = record(b"x" * 100, b"key", headers)
    assert record_size(msg, msg.headers()) == 100 + 3 + len("DUE_TIME") + 13 + len("empty")
    assert record_size(record(None), None) == 0


def test_held_records_track_their_size_and_pause_on_bytes_before_records() -> None:
    held = HeldRecords(LIMITS)
    hold(held, *(record(b"x" * 250) for _ in range(4)))
    assert (len(held), held.size) == (4, 1000)
    assert held.full  # 4 records, far below the record cap: the byte cap decides
    held.popleft()
    assert not held.full
    assert not held.may_resume  # 750 bytes > half of 1000
    held.popleft()
    assert held.may_resume
    held.popleft()
    held.popleft()
    assert (len(held), held.size) == (0, 0)


def test_held_records_keep_read_order_with_the_headers_read_at_intake() -> None:
    held = HeldRecords(LIMITS)
    first, second = record(b"1", headers=[("A", b"1")]), record(b"2")
    hold(held, first, second)
    assert held.head() == (first, [("A", b"1")])
    held.popleft()
    assert held.head() == (second, None)


def test_a_run_takes_records_off_the_head_and_their_size_with_them() -> None:
    held = HeldRecords(LIMITS)
    first, second = record(b"x" * 300), record(b"y" * 200)
    hold(held, first, second)

    def take_first(records, expected) -> tuple[int, int]:
        assert records.popleft()[0] is expected
        return 1, 300

    assert held.take_run(take_first, first) == 1
    assert (len(held), held.size, held.head()) == (1, 200, (second, None))


# -- holding a run of records: the Python reference and the core's counterpart ------------

HoldRun = Callable[..., tuple[int, int, bool]]


@pytest.fixture(params=["hold_run", "compiled hold_run"])
def run(request: pytest.FixtureRequest) -> HoldRun:
    return hold_run if request.param == "hold_run" else compiled_core().hold_run


def at(offset: int, topic: str = "t", partition: int = 0, size: int = 10, **kw: Any) -> Message:
    return Message(topic=topic, partition=partition, offset=offset, value=b"v" * size, **kw)


def test_a_run_holds_its_partition_and_stops_at_another(run: HoldRun) -> None:
    msgs = [at(5), at(6), at(7, partition=1), at(8)]
    records: deque = deque()
    pq = ProcessQueue()
    assert run(records, msgs, 0, ("t", 0), pq, HoldLimits(10, 1000), 3) == (2, 23, False)
    assert [(m.offset(), h, s) for m, h, s in records] == [(5, None, 10), (6, None, 10)]
    assert (pq.count, pq.highest_seen) == (2, 6)


def test_a_run_stops_at_an_error_another_topic_or_a_record_without_an_offset(
    run: HoldRun,
) -> None:
    eof = KafkaError(KafkaError._PARTITION_EOF)
    for stop in (at(2, error=eof), at(2, topic="u"), Message(topic="t", partition=0)):
        msgs = [at(1), stop, at(3)]
        assert run(deque(), msgs, 0, ("t", 0), ProcessQueue(), HoldLimits(10, 1000), 0)[0] == 1


def test_a_run_skips_records_read_before(run: HoldRun) -> None:
    pq = ProcessQueue()
    pq.track_new(6)  # read up to 6 before a seek back
    records: deque = deque()
    assert run(records, [at(5), at(6), at(7)], 0, ("t", 0), pq, HoldLimits(10, 1000), 0) == (
        3,
        10,
        False,
    )
    assert [m.offset() for m, _, _ in records] == [7]


@pytest.mark.parametrize(
    ("caps", "stopped", "held"),
    [(HoldLimits(2, 1000), 2, 2), (HoldLimits(10, 25), 3, 3), (HoldLimits(1, 1), 0, 1)],
)
def test_a_run_stops_before_the_record_that_finds_the_partition_full(
    run: HoldRun, caps: HoldLimits, stopped: int, held: int
) -> None:
    records: deque = deque([(at(0), None, 10)])  # one held already, 10 bytes
    pq = ProcessQueue()
    pq.track_new(0)
    msgs = [at(0), at(1), at(2), at(3), at(4)]  # 0: read before, checked against the caps
    end, size, full = run(records, msgs, 0, ("t", 0), pq, caps, 10)
    assert (end, full) == (stopped, True)
    assert (len(records), size, pq.count) == (held, 10 * held, held)


def test_an_empty_partition_admits_a_record_larger_than_the_byte_cap(run: HoldRun) -> None:
    records: deque = deque()
    assert run(
        records, [at(0, size=50), at(1)], 0, ("t", 0), ProcessQueue(), HoldLimits(9, 20), 0
    ) == (
        1,
        50,
        True,
    )


_HEADERS = st.one_of(
    st.none(),
    st.lists(st.tuples(st.text(max_size=5), st.one_of(st.none(), st.binary(max_size=5)))),
)


@st.composite
def _messages(draw: st.DrawFn) -> list[Message]:
    """Runs of records of two partitions, offsets going up with repeats and gaps, some
    with an error or without an offset."""
    out, offset = [], draw(st.integers(0, 3))
    for _ in range(draw(st.integers(0, 12))):
        offset += draw(st.integers(-1, 2))
        kind = draw(st.sampled_from(["record"] * 8 + ["error", "no offset", "other topic"]))
        fields: dict[str, Any] = {
            "topic": "u" if kind == "other topic" else "t",
            "partition": draw(st.integers(0, 1)),
            "value": draw(st.one_of(st.none(), st.binary(max_size=30))),
            "key": draw(st.one_of(st.none(), st.binary(max_size=4))),
            "headers": draw(_HEADERS),
        }
        if kind != "no offset":
            fields["offset"] = max(offset, 0)
        if kind == "error":
            fields["error"] = KafkaError(KafkaError._PARTITION_EOF)
        out.append(Message(**fields))
    return out


@settings(max_examples=300)
@given(
    msgs=_messages(),
    start=st.integers(0, 4),
    held=st.integers(0, 3),
    seen=st.integers(-1, 6),
    caps=st.tuples(st.integers(1, 6), st.integers(1, 120)),
)
def test_the_compiled_run_holds_as_the_reference(
    msgs: list[Message], start: int, held: int, seen: int, caps: tuple[int, int]
) -> None:
    core = compiled_core()
    outcomes = []
    for run_, new_pq in ((hold_run, ProcessQueue), (core.hold_run, core.ProcessQueue)):
        for pq in (new_pq(), ProcessQueue()):  # the core's run takes either queue
            pq.seen(seen)
            records: deque = deque([(None, None, 1)] * held)
            result = run_(records, msgs, start, ("t", 0), pq, HoldLimits(*caps), held)
            entries = [(id(m), h, s) for m, h, s in records]
            outcomes.append((result, entries, pq.count, pq.highest_seen, pq.commit_offset()))
    assert all(outcome == outcomes[0] for outcome in outcomes[1:])
