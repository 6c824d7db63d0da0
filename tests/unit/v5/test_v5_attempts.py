"""The attempt log's pure parts: snapshots, the book of other members, restoring."""

from __future__ import annotations

import pytest

from rmqcompat.message import MessageExt
from rmqcompat.v5.attempts import AttemptBook, Held, decode, encode, restore

P0 = ("ns.Jobs", 0)
P1 = ("ns.Jobs", 1)


def _ext(offset: int, reconsume_times: int = 0) -> MessageExt:
    return MessageExt("Jobs", b"b", f"id{offset}", 0, offset, 0, 0, reconsume_times)


def test_a_snapshot_round_trips():
    entries = [(P0, 5, 1), (P1, 7, 3)]
    assert decode(encode(entries)) == entries


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (b"\xff", "not JSON"),
        (b"{", "not JSON"),
        (b'{"a": 1}', "not a list"),
        (b'[["t", 0, 1]]', "is not \\[topic, partition, offset, attempt\\]"),
        (b'[["t", 0, -1, 1]]', "is not \\[topic"),
        (b"[[1, 0, 1, 1]]", "is not \\[topic"),
        (b'[["t", 0, true, 1]]', "is not \\[topic"),
    ],
)
def test_a_bad_snapshot_is_refused_naming_the_problem(value: bytes, problem: str):
    with pytest.raises(ValueError, match=problem):
        decode(value)


def test_held_snapshots_what_is_handed_out_and_not_settled():
    held = Held()
    assert decode(held.add({1: (P0, 5, 1), 2: (P0, 6, 1)})) == [(P0, 5, 1), (P0, 6, 1)]
    assert decode(held.settle(1)) == [(P0, 6, 1)]
    assert decode(held.settle(42)) == [(P0, 6, 1)]  # unknown: nothing changes
    assert decode(held.add({3: (P1, 0, 2)})) == [(P0, 6, 1), (P1, 0, 2)]


def test_the_book_keeps_each_members_latest_snapshot_and_the_highest_attempt():
    book = AttemptBook(own="me")
    book.apply("a", encode([(P0, 5, 1), (P1, 9, 1)]))
    book.apply("b", encode([(P0, 5, 3), (P0, 6, 2)]))
    assert book.attempts(P0) == {5: 3, 6: 2}
    book.apply("b", encode([(P0, 6, 2)]))  # b's newer snapshot replaces its older one
    assert book.attempts(P0) == {5: 1, 6: 2}
    book.apply("a", None)  # a left cleanly
    assert book.attempts(P0) == {6: 2}
    assert book.attempts(P1) == {}


def test_the_book_ignores_its_own_member_and_keeps_an_older_snapshot_over_a_bad_one():
    book = AttemptBook(own="me")
    book.apply("me", encode([(P0, 1, 4)]))
    assert book.attempts(P0) == {}
    book.apply("a", encode([(P0, 2, 1)]))
    with pytest.raises(ValueError):
        book.apply("a", b"garbage")
    assert book.attempts(P0) == {2: 1}


def test_restore_counts_the_lost_attempt_and_never_lowers_one():
    lost, later, untouched = _ext(5), _ext(6, reconsume_times=4), _ext(7)
    restore([lost, later, untouched], {5: 2, 6: 1})
    assert lost.reconsume_times == 2  # handed out as attempt 2: next is attempt 3
    assert later.reconsume_times == 4
    assert untouched.reconsume_times == 0
