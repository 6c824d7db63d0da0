"""One replay transaction's records, built without I/O: the replayed messages and the
ledger pages that record them (:mod:`rmqcompat.dlq.ledger`).

Built before their transaction (the first ones while the broker sets the replay up), so
the transaction itself only hands ready records to the producer.
What every message of a chunk shares (the replay time, the reconsume reset, who, host
and command) is built once per chunk.
"""

from __future__ import annotations

import getpass
import socket
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from rmqcompat.core import CORE
from rmqcompat.dlq.ledger import PAGE_SIZE, LedgerPage, Row, ledger_key, page_key
from rmqcompat.dlq.model import DeadLetter
from rmqcompat.dlq.republish import Header, Target, replay_headers, replay_stamp, replay_topic
from rmqcompat.errors import ConfigError
from rmqcompat.message_id import new_message_id, new_message_ids
from rmqcompat.topics.naming import to_kafka_topic

#: One dead letter to replay: the letter, its logical destination, its replay number.
Pending = tuple[DeadLetter, str, int]
#: ``(topic, value, key, headers)``, as ``Producer.produce`` takes them.
Record = tuple[str, bytes, bytes | None, list[Header]]


@dataclass(frozen=True)
class Operator:
    """Who runs the replay, recorded in every ledger page."""

    who: str
    host: str
    command: str

    @classmethod
    def current(cls, command: str) -> Operator:
        return cls(getpass.getuser(), socket.gethostname(), command)


@dataclass(frozen=True)
class Chunk:
    """The records of one transaction: a message per ``pending`` entry (with the core, a
    ``ReplayRecords`` of them, which it hands over without building each tuple), then
    the ledger ``pages`` recording them; ``rows`` are the pages' rows, one per
    ``pending`` entry."""

    pending: Sequence[Pending]
    records: Sequence[Record]
    pages: list[Record]
    rows: Sequence[Row]


class Tally(Protocol):
    """Where :func:`take_chunk` counts the dead letters it leaves out, and says why."""

    skipped: int
    failed: int
    problems: list[str]


def take_chunk(
    letters: Iterator[DeadLetter],
    counts: dict[str, int],
    force: bool,
    target: Target,
    limits: tuple[int, int],
    destinations: dict[tuple[str, str], str],
    tally: Tally,
) -> list[Pending]:
    """The next transaction's contents, taken from ``letters``: each dead letter to be
    replayed with its destination and its replay number (how often the ledger's
    ``counts`` say it was replayed), until ``limits`` (most letters, most body bytes) is
    reached or ``letters`` ends; empty once nothing is left to replay.

    A letter replayed before is skipped unless ``force``d, one without a usable original
    topic fails (both counted in ``tally``). ``destinations`` remembers the destination of
    each (group, original topic) across calls. The pure-Python reference of the core's
    ``take_chunk``: the same answer for every input
    (``tests/unit/dlq/test_replay_core_parity.py``).
    """
    most, max_bytes = limits
    chunk: list[Pending] = []
    size = 0
    for letter in letters:
        done = counts.get(letter.dlq_id, 0) if counts else 0  # none on a first replay
        if done and not force:
            tally.skipped += 1
            continue
        origin = (letter.group, letter.original_topic)
        topic = destinations.get(origin)
        if topic is None:
            try:
                topic = destinations[origin] = replay_topic(letter, target)
            except ConfigError as exc:
                tally.failed += 1
                tally.problems.append(str(exc))
                continue
        chunk.append((letter, topic, done))
        size += len(letter.body)
        if len(chunk) >= most or size >= max_bytes:
            break
    return chunk


#: Taking letters into chunks was a Python loop of 3-4 us a letter around the decode.
active_take_chunk = take_chunk if CORE is None else CORE.take_chunk


class ChunkBuilder:
    """Builds the chunks of one replay run of ``group``; numbers their ledger pages."""

    def __init__(
        self,
        group: str,
        target: Target,
        namespace: str,
        ledger: str,
        operator: Operator,
    ) -> None:
        self._group = group
        self._target = target
        self._namespace = namespace
        self._ledger = ledger
        self._operator = operator
        self._run = new_message_id()  # unique across hosts: page keys are never reused
        self._pages = 0

    def build(self, pending: Sequence[Pending], when_ms: int) -> Chunk:
        records, rows = _replay_records(
            pending,
            new_message_ids(len(pending)),
            self._group,
            self._namespace,
            self._target,
            replay_stamp(when_ms),
        )
        pages = [
            self._page(rows[start : start + PAGE_SIZE], when_ms)
            for start in range(0, len(rows), PAGE_SIZE)
        ]
        return Chunk(pending, records, pages, rows)

    def _page(self, rows: list[Row], when_ms: int) -> Record:
        operator = self._operator
        page = LedgerPage(self._group, operator.who, operator.host, when_ms, operator.command, rows)
        key = page_key(self._group, self._run, self._pages).encode("utf-8")
        self._pages += 1
        return self._ledger, page.encode(), key, []


def replay_records(
    pending: Sequence[Pending],
    new_ids: Sequence[str],
    group: str,
    namespace: str,
    target: Target,
    stamp: tuple[Header, ...],
) -> tuple[Sequence[Record], list[Row]]:
    """The message replaying each ``pending`` dead letter (with its new message id from
    ``new_ids``) and the ledger row recording it, in order; ``stamp`` is
    :func:`~rmqcompat.dlq.republish.replay_stamp` of the replay's time.

    The one loop a replay runs per dead letter. The pure-Python reference of the core's
    ``replay_records``: the same answer for every input
    (``tests/unit/dlq/test_replay_core_parity.py``), the core's records being a
    ``ReplayRecords``, a sequence of the same tuples that its ``DirectProduce`` hands to
    librdkafka without building them.

    Raises:
        ValueError: ``new_ids`` is not as long as ``pending``.
    """
    records: list[Record] = []
    rows: list[Row] = []
    add_record, add_row = records.append, rows.append
    for (letter, topic, replay), new_id in zip(pending, new_ids, strict=True):
        dlq_id = letter.dlq_id
        replay_id = ledger_key(group, dlq_id, replay)
        headers = replay_headers(letter, target, new_id, replay_id, stamp)
        add_record((to_kafka_topic(topic, namespace), letter.body, letter.key, headers))
        original = letter.original_topic
        add_row((dlq_id, letter.msg_id, letter.origin_msg_id, original, topic, new_id, replay))
    return records, rows


#: Building a replay's records took 4-6 us a dead letter in Python, more than handing them
#: to librdkafka (2-2.5 us): the replay's own thread was its bottleneck. The core's records
#: are a ``ReplayRecords``, a sequence of the same tuples.
_replay_records = replay_records if CORE is None else CORE.replay_records
