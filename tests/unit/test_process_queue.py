"""The in-flight rule of a partition, for the Python reference and the compiled core's
class alike; a stateful Hypothesis test runs the same operations through both."""

from __future__ import annotations

from typing import Any

import pytest
from compiled_core import compiled_core
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from rmqcompat.process_queue import ProcessQueue


@pytest.fixture(params=["ProcessQueue", "compiled ProcessQueue"])
def new_pq(request: pytest.FixtureRequest) -> type[ProcessQueue]:
    """Each implementation: the Python class, then the core's."""
    if request.param == "ProcessQueue":
        return ProcessQueue
    return compiled_core().ProcessQueue  # type: ignore[no-any-return]


def test_commit_offset_is_smallest_in_flight(new_pq: type[ProcessQueue]) -> None:
    pq = new_pq()
    for offset in (10, 11, 12):
        pq.add(offset, 5)
    pq.remove(11)
    pq.remove(12)
    assert pq.commit_offset() == 10  # a slow 10 holds the commit while later ones finish


def test_commit_offset_is_highest_seen_plus_one_when_empty(new_pq: type[ProcessQueue]) -> None:
    pq = new_pq()
    pq.add(10, 1)
    pq.add(11, 1)
    pq.remove(11)
    pq.remove(10)
    assert pq.commit_offset() == 12


def test_filtered_offsets_count_as_consumed(new_pq: type[ProcessQueue]) -> None:
    pq = new_pq()
    pq.add(3, 1)
    pq.seen(4)
    pq.remove(3)
    assert pq.commit_offset() == 5


def test_commit_offset_never_moves_backwards(new_pq: type[ProcessQueue]) -> None:
    pq = new_pq()
    pq.add(20, 1)
    pq.remove(20)
    assert pq.commit_offset() == 21
    pq.add(5, 1)  # e.g. a stale record fetched again
    assert pq.commit_offset() == 21


def test_start_offset_is_a_floor(new_pq: type[ProcessQueue]) -> None:
    pq = new_pq()
    assert pq.commit_offset() is None  # neither a start nor a record: nothing to commit
    pq.start_at(100)
    # the start is committable before any record: the next owner must not resolve
    # "latest" again and skip what was produced meanwhile
    assert pq.commit_offset() == 100
    pq.seen(50)
    assert pq.commit_offset() == 100


def test_rebase_after_an_offset_reset_lowers_the_floor(new_pq: type[ProcessQueue]) -> None:
    pq = new_pq()
    pq.start_at(100)  # stored, but beyond the end: the broker reset the position to 0
    pq.rebase(0)
    pq.add(0, 1)
    assert pq.commit_offset() == 0
    pq.remove(0)
    assert pq.commit_offset() == 1


def test_count_size_and_span(new_pq: type[ProcessQueue]) -> None:
    pq = new_pq()
    pq.add(1, 10)
    pq.add(1, 10)  # counted once
    pq.add(7, 30)
    assert (pq.count, pq.size_bytes, pq.span) == (2, 40, 6)
    pq.remove(1)
    pq.remove(1)  # released twice: no effect
    assert (pq.count, pq.size_bytes, pq.span) == (1, 30, 0)
    assert 7 in pq and 1 not in pq
    pq.remove(7)
    assert (pq.count, pq.size_bytes, pq.span, pq.first()) == (0, 0, 0, None)


def test_first_and_last_skip_removed_offsets_lazily(new_pq: type[ProcessQueue]) -> None:
    pq = new_pq()
    for offset in range(10, 20):
        pq.add(offset, 1)
    pq.remove_all([10, 11, 18, 19])
    assert (pq.first(), pq.last(), pq.span, pq.count) == (12, 17, 5, 6)


def test_out_of_order_add_keeps_the_order(new_pq: type[ProcessQueue]) -> None:
    pq = new_pq()
    pq.add(10, 1)
    pq.add(12, 1)
    pq.add(11, 1)  # a stale record fetched again, below the last one
    pq.remove(10)
    assert (pq.first(), pq.last()) == (11, 12)
    pq.remove(11)
    assert pq.commit_offset() == 12


def test_remove_then_re_add_is_tracked_again(new_pq: type[ProcessQueue]) -> None:
    pq = new_pq()
    pq.add(5, 2)
    pq.remove(5)
    pq.add(5, 2)
    assert (pq.first(), pq.count, pq.size_bytes) == (5, 1, 2)
    pq.remove(5)
    assert (pq.first(), pq.last(), pq.count, pq.size_bytes) == (None, None, 0, 0)


# -- the forwarder's use: records finish in any order, offsets may have gaps ---------------


def test_out_of_order_finishes_commit_only_up_to_the_oldest_unfinished(
    new_pq: type[ProcessQueue],
) -> None:
    pq = new_pq()
    for offset in (10, 11, 12, 13):
        assert pq.track_new(offset)
    pq.remove(12)
    pq.remove(13)
    assert pq.commit_offset() == 10  # 10 and 11 are still in flight
    pq.remove(10)
    assert pq.commit_offset() == 11
    pq.remove(11)
    assert pq.commit_offset() == 14
    assert pq.count == 0


def test_offset_gaps_do_not_hold_the_position_back(new_pq: type[ProcessQueue]) -> None:
    # Transaction markers and compaction leave holes in a partition's offsets.
    pq = new_pq()
    for offset in (3, 7, 8):
        pq.track_new(offset)
    pq.remove(3)
    assert pq.commit_offset() == 7
    pq.remove(8)
    assert pq.commit_offset() == 7
    pq.remove(7)
    assert pq.commit_offset() == 9


def test_re_read_records_are_not_tracked_again(new_pq: type[ProcessQueue]) -> None:
    pq = new_pq()
    assert pq.track_new(1)
    assert pq.track_new(2)
    pq.remove(1)
    assert not pq.track_new(2)
    assert not pq.track_new(1)  # done before: reading it again must not re-open it
    assert pq.commit_offset() == 2
    assert pq.track_new(3)
    assert pq.highest_seen == 3


def test_nothing_to_commit_before_the_first_record(new_pq: type[ProcessQueue]) -> None:
    pq = new_pq()
    assert pq.commit_offset() is None
    assert pq.highest_seen == -1


# -- the compiled class against the reference ---------------------------------------------

_OFFSETS = st.integers(min_value=-2, max_value=40)  # few enough to repeat, stale and fresh
_SIZES = st.integers(min_value=0, max_value=1 << 40)


def test_the_compiled_queue_refuses_an_offset_beyond_kafkas_64_bits_and_keeps_its_state() -> None:
    """Kafka's offsets are signed 64-bit integers; the compiled queue holds them as such and
    refuses a larger one with OverflowError, leaving its state as it was (the reference,
    which takes any integer, is not asked)."""
    pq = compiled_core().ProcessQueue()
    pq.add(7, 1)
    for offset in (2**63, -(2**63) - 1):
        with pytest.raises(OverflowError):
            pq.add(offset, 1)
        with pytest.raises(OverflowError):
            pq.track_new(offset)
    assert (pq.count, pq.size_bytes, pq.highest_seen, pq.commit_offset()) == (1, 1, 7, 7)
    pq.add(2**63 - 1, 1)  # the largest offset Kafka has
    assert pq.highest_seen == 2**63 - 1


class SameAsTheReference(RuleBasedStateMachine):
    """Every operation on both classes at once; each answer and the observable state
    (count, bytes, highest seen, first, last, span) must be the same."""

    def __init__(self) -> None:
        super().__init__()
        self.reference = ProcessQueue()
        self.compiled: Any = compiled_core().ProcessQueue()

    def both(self, name: str, *args: Any) -> Any:
        expected = getattr(self.reference, name)(*args)
        assert getattr(self.compiled, name)(*args) == expected, (name, args)
        return expected

    @rule(offset=_OFFSETS, size=_SIZES)
    def add(self, offset: int, size: int) -> None:
        self.both("add", offset, size)

    @rule(offset=_OFFSETS, size=_SIZES)
    def track_new(self, offset: int, size: int) -> None:
        self.both("track_new", offset, size)

    @rule(offset=_OFFSETS)
    def track_new_without_a_size(self, offset: int) -> None:
        self.both("track_new", offset)

    @rule(offset=_OFFSETS)
    def seen(self, offset: int) -> None:
        self.both("seen", offset)

    @rule(offset=_OFFSETS)
    def remove(self, offset: int) -> None:
        self.both("remove", offset)

    @rule(offsets=st.lists(_OFFSETS, max_size=6), as_tuple=st.booleans())
    def remove_all(self, offsets: list[int], as_tuple: bool) -> None:
        self.both("remove_all", tuple(offsets) if as_tuple else offsets)

    @rule(offset=st.one_of(_OFFSETS, st.none(), st.just("3")))
    def contains(self, offset: object) -> None:
        assert (offset in self.compiled) == (offset in self.reference)

    @rule()
    def commit_offset(self) -> None:
        self.both("commit_offset")

    @rule(offset=_OFFSETS)
    def start_at(self, offset: int) -> None:
        self.both("start_at", offset)

    @rule(offset=_OFFSETS)
    def rebase(self, offset: int) -> None:
        self.both("rebase", offset)

    @rule(dropped=st.booleans())
    def drop(self, dropped: bool) -> None:
        self.reference.dropped = self.compiled.dropped = dropped

    @invariant()
    def same_state(self) -> None:
        ref, core = self.reference, self.compiled
        fields = ("count", "size_bytes", "highest_seen", "span", "dropped")
        assert [getattr(core, f) for f in fields] == [getattr(ref, f) for f in fields]
        assert (core.first(), core.last()) == (ref.first(), ref.last())


SameAsTheReference.TestCase.settings = settings(max_examples=300, stateful_step_count=40)
test_the_compiled_class_answers_as_the_reference = SameAsTheReference.TestCase
