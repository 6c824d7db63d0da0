"""UNIQ_KEY message ids: 32 upper-case hex digits, unique in-process and across processes."""

from __future__ import annotations

import multiprocessing
import re
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection

import pytest

from rmqcompat.message_id import new_message_id

ID_FORMAT = re.compile(r"[0-9A-F]{32}")


def _ids(count: int) -> list[str]:
    return [new_message_id() for _ in range(count)]


def _send_ids(sender: Connection, count: int) -> None:
    sender.send(_ids(count))
    sender.close()


def test_format_is_32_upper_hex() -> None:
    assert all(ID_FORMAT.fullmatch(msg_id) for msg_id in _ids(1000))


def test_100k_ids_in_one_process_are_unique() -> None:
    assert len(set(_ids(100_000))) == 100_000


def test_ids_from_many_threads_are_unique() -> None:
    with ThreadPoolExecutor(max_workers=8) as pool:
        batches = list(pool.map(_ids, [5_000] * 16))
    ids = [msg_id for batch in batches for msg_id in batch]
    assert len(set(ids)) == len(ids) == 80_000


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_ids_from_other_processes_are_unique(method: str) -> None:
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"start method {method} unavailable")
    before = _ids(2_000)  # advance this process's counter before forking
    # Plain processes, not a Pool: a pool's helper threads fork replacement workers, and a
    # fork that catches one of them holding the task queue's lock hangs the run at exit.
    context = multiprocessing.get_context(method)
    receivers, children = [], []
    for _ in range(3):
        receiver, sender = context.Pipe(duplex=False)
        child = context.Process(target=_send_ids, args=(sender, 2_000))
        child.start()
        sender.close()
        receivers.append(receiver)
        children.append(child)
    after = _ids(2_000)  # the parent keeps counting while the children run
    batches = [receiver.recv() for receiver in receivers]
    for child in children:
        child.join(timeout=30)
        assert child.exitcode == 0
    ids = before + after + [msg_id for batch in batches for msg_id in batch]
    assert len(set(ids)) == len(ids) == 10_000
