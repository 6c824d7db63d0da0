"""Message ids in batches (a replay chunk's new ids): the same ids, by the same rule, as
one :func:`new_message_id` call each; unique across batches, threads and processes."""

from __future__ import annotations

import multiprocessing
import re
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection

import pytest

from rmqcompat.message_id import new_message_id, new_message_ids

ID_FORMAT = re.compile(r"[0-9A-F]{32}")


def _sequence(msg_id: str) -> int:
    return int(msg_id[24:], 16)


def _send_batch(sender: Connection, count: int) -> None:
    sender.send(new_message_ids(count))
    sender.close()


def test_a_batch_continues_the_single_ids_sequence_with_the_same_prefix() -> None:
    before = new_message_id()
    batch = new_message_ids(5)
    after = new_message_id()
    ids = [before, *batch, after]
    assert all(ID_FORMAT.fullmatch(msg_id) for msg_id in ids)
    assert {msg_id[:16] for msg_id in ids} == {before[:16]}  # the process's random part
    assert [_sequence(msg_id) - _sequence(before) for msg_id in ids] == list(range(7))


def test_a_batch_shares_one_clock_reading() -> None:
    batch = new_message_ids(50_000)
    assert len({msg_id[:24] for msg_id in batch}) == 1
    assert len(set(batch)) == 50_000


def test_batches_from_many_threads_and_single_ids_are_all_distinct() -> None:
    with ThreadPoolExecutor(max_workers=8) as pool:
        batches = list(pool.map(new_message_ids, [1_000] * 16))
        singles = list(pool.map(lambda _: new_message_id(), range(2_000)))
    ids = [msg_id for batch in batches for msg_id in batch] + singles
    assert len(set(ids)) == len(ids) == 18_000


def test_an_empty_batch_takes_nothing_and_a_negative_one_is_refused() -> None:
    before = new_message_id()
    assert new_message_ids(0) == []
    assert _sequence(new_message_id()) == _sequence(before) + 1
    with pytest.raises(ValueError, match="count must be >= 0"):
        new_message_ids(-1)


def test_a_forked_child_makes_other_ids_than_its_parent() -> None:
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("start method fork unavailable")
    parent = new_message_ids(1_000)  # the counter and the cached head are set before the fork
    receiver, sender = multiprocessing.get_context("fork").Pipe(duplex=False)
    child = multiprocessing.get_context("fork").Process(target=_send_batch, args=(sender, 1_000))
    child.start()
    sender.close()
    parent += new_message_ids(1_000)
    children = receiver.recv()
    child.join(timeout=30)
    assert child.exitcode == 0
    assert children[0][:16] != parent[0][:16]  # a fresh random part after the fork
    assert len(set(parent + children)) == 3_000
