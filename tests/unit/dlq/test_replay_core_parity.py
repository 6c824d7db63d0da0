"""A replay's per-letter work, compiled and pure: the same dead letters, the same results.

``decode_ids`` (a dead letter's layout, message ids and original topic), ``take_chunk``
(which letters one transaction replays) and ``replay_records`` (a chunk's records and
ledger rows) against the core's ``decode_letter_ids``, ``take_chunk`` and
``replay_records``, over generated dead letters: the usual
headers of a send-back, any others, odd values (not UTF-8, None), repeated and missing
names, letters decoded before or not, letters of a subclass (read by name, where the
core reads a dead letter's slots).
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field
from typing import Any

from compiled_core import compiled_core
from hypothesis import given, settings
from hypothesis import strategies as st
from unit_fakes import SEND_BACK_HEADERS

from rmqcompat import properties as props
from rmqcompat.dlq import chunk, model, page
from rmqcompat.dlq.model import DeadLetter
from rmqcompat.dlq.republish import replay_stamp

KNOWN = [
    props.UNIQ_KEY,
    props.ORIGIN_MESSAGE_ID,
    props.RETRY_TOPIC,
    props.BORN_TIMESTAMP,
    props.RECONSUME_TIME,
    props.MAX_RECONSUME_TIMES,
    props.DUE_TIME,
    props.REPLAY_ID,
    props.TAGS,
]
NAMES = st.sampled_from(KNOWN) | st.text(max_size=4)
VALUES = (
    st.sampled_from([b"ID0", b"Orders", b"1700000000000", b""])
    | st.binary(max_size=6)  # often not UTF-8
    | st.none()
)
#: The headers a consumer's send-back writes, in its order.
SEND_BACK = SEND_BACK_HEADERS
#: A send-back's headers, some left out, then any others; or any headers at all.
HEADERS = st.builds(
    lambda extra, drop: tuple(h for h in SEND_BACK + tuple(extra) if h[0] not in drop),
    st.lists(st.tuples(NAMES, VALUES), max_size=4),
    st.sets(st.sampled_from(KNOWN), max_size=3),
) | st.lists(st.tuples(NAMES, VALUES), max_size=6).map(tuple)


class SubclassedLetter(DeadLetter):
    """A dead letter of a subclass, whose fields the core reads by name, not by slot."""


LETTERS = st.builds(
    lambda kind, *fields: kind(*fields),
    st.sampled_from([DeadLetter, DeadLetter, SubclassedLetter]),
    st.just("G"),
    st.sampled_from(["ns.rmq.dlq.G", "t", "t\ud800"]),  # a lone surrogate: not UTF-8
    st.integers(min_value=0, max_value=2**31),
    st.integers(min_value=0, max_value=2**63) | st.just(2**70),
    st.integers(min_value=0, max_value=2**63),
    st.binary(max_size=4),
    st.binary(max_size=3) | st.none(),
    HEADERS,
)


def _decoded(kernel: Any, letter: DeadLetter) -> Any:
    """What ``kernel`` makes of a fresh copy of ``letter``: its layout's names and every
    derived field, or the exception's type."""
    copy = dataclasses.replace(letter)
    try:
        layout = kernel(copy)
    except Exception as exc:  # the exception's type is the outcome compared
        return type(exc)
    assert copy.layout is layout
    return layout.names, copy.dlq_id, copy.msg_id, copy.origin_msg_id, copy.original_topic


@settings(max_examples=300)
@given(LETTERS)
def test_a_dead_letters_ids_are_decoded_the_same_compiled_and_pure(letter: DeadLetter) -> None:
    compiled = _decoded(compiled_core().decode_letter_ids, letter)
    assert compiled == _decoded(model.decode_ids, letter)


@dataclass
class Tally:
    skipped: int = 0
    failed: int = 0
    problems: list[str] = field(default_factory=list)


def _chunks(kernel: Any, letters: list[DeadLetter], replayed: list[int], **given: Any) -> Any:
    """Every chunk ``kernel`` (``take_chunk``) takes from fresh copies of ``letters`` (the
    ledger counting ``replayed[i]`` replays of the i-th), as ``(dlq_id, topic, replay)``,
    with what it counted and the destinations it remembered; or the exception's type."""
    copies = [dataclasses.replace(letter) for letter in letters]
    counts = {letter.dlq_id: n for letter, n in zip(copies, replayed, strict=False) if n}
    remaining, tally, destinations = iter(copies), Tally(), dict(given.pop("destinations"))
    chunks = []
    try:
        while chunk := kernel(remaining, counts, tally=tally, destinations=destinations, **given):
            chunks.append([(letter.dlq_id, topic, done) for letter, topic, done in chunk])
    except Exception as exc:  # the exception's type is the outcome compared
        return type(exc)
    return chunks, tally, destinations


@settings(max_examples=300)
@given(
    st.lists(LETTERS, max_size=8),
    st.lists(st.integers(min_value=0, max_value=2), max_size=8),
    st.booleans(),
    st.sampled_from(["retry", "original"]),
    st.tuples(st.integers(min_value=1, max_value=4), st.integers(min_value=0, max_value=9)),
    st.sampled_from([{}, {("G", "Orders"): "Known"}]),
)
def test_a_transactions_letters_are_taken_the_same_compiled_and_pure(
    letters: list[DeadLetter],
    replayed: list[int],
    force: bool,
    target: str,
    limits: tuple[int, int],
    destinations: dict[tuple[str, str], str],
) -> None:
    given = {"force": force, "target": target, "limits": limits, "destinations": destinations}
    compiled = _chunks(compiled_core().take_chunk, letters, replayed, **given)
    assert compiled == _chunks(chunk.take_chunk, letters, replayed, **given)


def _records(kernel: Any, pending: list[Any], new_ids: list[str], **given: Any) -> Any:
    """What ``kernel`` (``replay_records``) makes of fresh copies of ``pending``'s letters
    (each decoded first or not, as ``decoded`` says): the records and rows, or the
    exception's type."""
    copies = []
    for (letter, topic, replay), decoded in zip(pending, given.pop("decoded"), strict=False):
        copy = dataclasses.replace(letter)
        if decoded:
            model.decode_ids(copy)
        copies.append((copy, topic, replay))
    try:
        records, rows = kernel(copies, new_ids, stamp=replay_stamp(77), **given)
    except Exception as exc:  # the exception's type is the outcome compared
        return type(exc)
    return list(records), rows  # the core's are a sequence of the same tuples


@settings(max_examples=300)
@given(
    st.lists(
        st.tuples(
            LETTERS,
            st.sampled_from(["%RETRY%G", "Orders", "bad topic"]),
            st.integers(min_value=0, max_value=3),
        ),
        max_size=5,
    ),
    st.lists(st.booleans(), min_size=5, max_size=5),
    st.sampled_from(["retry", "original"]),
    st.sampled_from(["", "ns"]),
    st.integers(min_value=-1, max_value=1),
    st.sampled_from(["G", "G\ud800"]),
)
def test_a_chunks_records_and_rows_are_built_the_same_compiled_and_pure(
    pending: list[Any],
    decoded: list[bool],
    target: str,
    namespace: str,
    extra_ids: int,
    group: str,
) -> None:
    new_ids = [f"NEW{i}" for i in range(max(0, len(pending) + extra_ids))]
    given = {"group": group, "namespace": namespace, "target": target, "decoded": decoded}
    compiled = _records(compiled_core().replay_records, pending, new_ids, **given)
    assert compiled == _records(chunk.replay_records, pending, new_ids, **given)


def test_the_core_builds_the_usual_replay_record_itself() -> None:
    """A send-back's dead letter is built without the pure path: the kept headers are
    the letter's own pairs, the new ones follow in the reference's order."""
    headers = (*SEND_BACK, ("user", None))
    letter = DeadLetter("G", "ns.rmq.dlq.G", 0, 7, 9, b"body", b"k", headers)
    records, rows = compiled_core().replay_records(
        [(letter, "%RETRY%G", 2)], ["NEW"], "G", "ns", "retry", replay_stamp(77)
    )
    topic, value, key, sent = records[0]
    assert (topic, value, key) == ("ns.rmq.retry.G", b"body", b"k")
    kept = [headers[1], headers[2], headers[5], headers[6]]
    assert all(a is b for a, b in zip(sent[:4], kept, strict=True))
    assert sent[4:] == [
        (props.UNIQ_KEY, b"NEW"),
        (props.REPLAY_ID, b"G/ns.rmq.dlq.G@0@7#2"),
        (props.RECONSUME_TIME, b"0"),
        (props.REPLAY_TIME, b"77"),
    ]
    assert rows == [("ns.rmq.dlq.G@0@7", "ID0", "ID0", "Orders", "%RETRY%G", "NEW", 2)]
    assert letter.layout.names == tuple(name for name, _ in headers)  # decoded on the way


#: Ledger row fields: the usual ids and topics, text with a separator, with a lone
#: surrogate, and objects that are not text.
ROW_TEXTS = st.one_of(
    st.sampled_from(["ID0", "ID1", "Orders", "%RETRY%G", "a\tb", "a\nb", "a\rb", "\ud800", ""]),
    st.text(max_size=6),
    st.sampled_from([5, None, b"ID0"]),
)
ROWS = st.lists(
    st.one_of(
        st.tuples(*[ROW_TEXTS] * 6, st.one_of(st.integers(-2, 3), st.just(2**70), st.just(True))),
        st.builds(lambda row: list(row), st.tuples(*[ROW_TEXTS] * 6, st.integers(0, 2))),
    ),
    max_size=6,
)


@settings(max_examples=400)
@given(ROWS, st.booleans())
def test_a_pages_lines_are_written_the_same_compiled_and_pure(
    rows: list[Any], as_tuple: bool
) -> None:
    replays = tuple(rows) if as_tuple else rows
    outcomes = []
    for kernel in (compiled_core().compact_rows, page.compact_rows):
        try:
            outcomes.append(kernel(replays))
        except Exception as exc:  # the exception's type is the outcome compared
            outcomes.append(type(exc))
    assert outcomes[0] == outcomes[1]


def test_the_core_writes_the_usual_page_itself() -> None:
    """Rows of one destination: the first line says the topics, the next ones leave them
    (and an origin id equal to the message id) out."""
    rows = [
        ("d@0@1", "ID1", "ID1", "Orders", "%RETRY%G", "N1", 0),
        ("d@0@2", "ID2", "O2", "Orders", "%RETRY%G", "N2", 3),
        ("d@0@3", "ID3", "ID3", "Orders", "%RETRY%G", "N3", 0),
    ]
    body = "d@0@1\tID1\tN1\t0\tID1\tOrders\t%RETRY%G\nd@0@2\tID2\tN2\t3\tO2\nd@0@3\tID3\tN3\t0"
    called: list[str] = []
    sys.setprofile(lambda frame, event, _: called.append(frame.f_code.co_name))
    try:
        compiled = compiled_core().compact_rows(rows)
    finally:
        sys.setprofile(None)
    assert "compact_rows" not in called  # not left to the Python rule
    assert compiled == page.compact_rows(rows) == body
    assert compiled_core().compact_rows([(*rows[0][:5], "N\t1", 0)]) is None
