"""The replay ledger's format and the chunks a replay writes, without a broker: one page
per up to PAGE_SIZE replays, shared fields once, every replay findable by its REPLAY_ID."""

from __future__ import annotations

import json

import pytest
from unit_fakes import dead_letters

from rmqcompat import properties as props
from rmqcompat.dlq.chunk import ChunkBuilder, Operator, Pending
from rmqcompat.dlq.ledger import (
    PAGE_SIZE,
    LedgerEntry,
    LedgerPage,
    ledger_key,
)
from rmqcompat.errors import MalformedHeaderError
from rmqcompat.properties import REPLAY_ID, REPLAY_TIME

ROW = ("d@0@1", "M", "O", "T", "%RETRY%G", "N", 0)
PAGE = LedgerPage("G", "me", "h", 5, "rmqcompat dlq replay", [ROW, ("d@0@2", *ROW[1:-1], 2)])
OPERATOR = Operator("me", "h", "rmqcompat dlq replay --group G")
SHARED = {"group": "G", "who": "me", "host": "h", "when_ms": 5, "command": "rmqcompat dlq replay"}
#: PAGE as format 1 wrote it (every page before format 2): ledgers keep such pages forever.
PAGE_V1 = (
    b'{"group":"G","who":"me","host":"h","when_ms":5,"command":"rmqcompat dlq replay",'
    b'"replays":[["d@0@1","M","O","T","%RETRY%G","N",0],["d@0@2","M","O","T","%RETRY%G","N",2]]}'
)


def test_a_page_is_written_in_format_2_its_shared_fields_once_then_a_line_per_replay() -> None:
    head, *lines = PAGE.encode().decode().split("\n")
    assert json.loads(head) == {"format": 2, **SHARED}
    # the first row has every field; the second shares the topics with it
    assert lines == ["d@0@1\tM\tN\t0\tO\tT\t%RETRY%G", "d@0@2\tM\tN\t2\tO"]
    assert LedgerPage.decode(PAGE.encode()) == PAGE


def test_format_2_rows_leave_out_what_the_row_above_or_the_msg_id_already_says() -> None:
    rows = [
        ("d@0@1", "M1", "M1", "T", "%RETRY%G", "N1", 0),  # 7 fields: the first row
        ("d@0@2", "M2", "M2", "T", "%RETRY%G", "N2", 0),  # 4: origin is msg_id, topics above
        ("d@0@3", "M3", "O3", "T", "%RETRY%G", "N3", 1),  # 5: its own origin
        ("d@0@4", "M4", "M4", "U", "%RETRY%G", "N4", 0),  # 7: another original topic
        ("d@0@5", "M5", "M5", "U", "U", "N5", 12),  # 7: another destination
        ("d@0@6", "M6", "M6", "U", "U", "N6", 0),  # 4
    ]
    page = LedgerPage("G", "me", "h", 5, "c", rows)
    lines = page.encode().decode().split("\n")[1:]
    assert [line.count("\t") + 1 for line in lines] == [7, 4, 5, 7, 7, 4]
    assert lines[2] == "d@0@3\tM3\tN3\t1\tO3"
    assert LedgerPage.decode(page.encode()) == page


@pytest.mark.parametrize(
    ("odd", "version"), [("M\tX", 1), ("M\nX", 1), ("M\r\nX", 1), ("M\rX", 2), ("", 2)]
)
def test_a_page_with_a_separator_in_a_field_is_written_in_format_1(odd: str, version: int) -> None:
    page = LedgerPage("G", "me", "h", 5, "c", [ROW, ("d@0@2", odd, odd, "T", "%RETRY%G", "N", 0)])
    value = page.encode()
    assert (value == page.encode_json()) == (version == 1)
    assert LedgerPage.decode(value) == page


def test_format_2_is_much_denser_than_format_1() -> None:
    rows = [
        (f"ns.rmq.dlq.G@0@{i}", f"{i:032X}", f"{i:032X}", "Orders", "%RETRY%G", f"{-i:032X}", 0)
        for i in range(PAGE_SIZE)
    ]
    page = LedgerPage("G", "me", "h", 5, "rmqcompat dlq replay --group G", rows)
    assert len(page.encode()) < 0.6 * len(page.encode_json())


def test_pages_written_in_format_1_are_still_read() -> None:
    assert LedgerPage.decode(PAGE_V1) == PAGE
    assert PAGE.encode_json() == PAGE_V1
    assert [entry.key for entry in LedgerPage.decode(PAGE_V1).entries()] == [
        "G/d@0@1",
        "G/d@0@2#2",
    ]


def test_an_empty_page_round_trips_in_both_formats() -> None:
    page = LedgerPage("G", "me", "h", 5, "c", [])
    assert LedgerPage.decode(page.encode()) == page == LedgerPage.decode(page.encode_json())


def test_a_page_reads_as_one_entry_per_replay_with_the_replay_id_as_key() -> None:
    first, second = LedgerPage.decode(PAGE.encode()).entries()
    assert first == LedgerEntry(
        "G", "d@0@1", "M", "O", "T", "%RETRY%G", "N", "me", "h", 5, "rmqcompat dlq replay", 0
    )
    assert (second.dlq_id, second.replay, second.who, second.when_ms) == ("d@0@2", 2, "me", 5)
    assert (
        (first.key, second.key)
        == ("G/d@0@1", "G/d@0@2#2")
        == (
            ledger_key("G", "d@0@1"),
            ledger_key("G", "d@0@2", 2),
        )
    )


def _page(**changes: object) -> bytes:
    return json.dumps({**json.loads(PAGE_V1), **changes}).encode()


def _compact(head: dict[str, object], *lines: str) -> bytes:
    return "\n".join([json.dumps(head), *lines]).encode()


FIRST = "d@0@1\tM\tN\t0\tO\tT\t%RETRY%G"
HEAD = {"format": 2, **SHARED}


@pytest.mark.parametrize(
    "value",
    [
        b"\xff",
        b"[]",
        b"{}",
        _page(when_ms="5"),
        _page(who=None),
        _page(extra=1),
        _page(replays={}),
        _page(replays=[list(ROW[:-1])]),  # a column missing
        _page(replays=[[*ROW[:-1], "0"]]),  # replay number as text
        _page(replays=[[1, *ROW[1:]]]),  # dlq_id as a number
        json.dumps({k: v for k, v in json.loads(PAGE_V1).items() if k != "host"}).encode(),
    ],
)
def test_malformed_format_1_pages_are_refused(value: bytes) -> None:
    with pytest.raises(MalformedHeaderError):
        LedgerPage.decode(value)


@pytest.mark.parametrize(
    "value",
    [
        _compact({**HEAD, "format": 3}, FIRST),
        _compact({k: v for k, v in HEAD.items() if k != "format"}, FIRST),
        _compact({**HEAD, "when_ms": "5"}, FIRST),
        _compact({**HEAD, "replays": []}, FIRST),
        b"not json\n" + FIRST.encode(),
        _compact(HEAD, "d@0@1\tM\tN\t0"),  # the first row must name its topics
        _compact(HEAD, "d@0@1\tM\tN\t0\tO"),
        _compact(HEAD, FIRST, "d@0@2\tM\tN\t0\tO\tT"),  # 6 fields
        _compact(HEAD, FIRST, "d@0@2\tM\tN"),
        _compact(HEAD, FIRST, ""),
        _compact(HEAD, FIRST.replace("\t0\t", "\tx\t")),
        _compact(HEAD, FIRST.replace("\t0\t", "\t01\t")),
        _compact(HEAD, FIRST.replace("\t0\t", "\t 1\t")),
    ],
)
def test_malformed_format_2_pages_are_refused(value: bytes) -> None:
    with pytest.raises(MalformedHeaderError):
        LedgerPage.decode(value)


def test_a_chunk_is_its_messages_and_its_pages_and_every_replay_is_in_a_page() -> None:
    count = 2 * PAGE_SIZE + 1
    pending: list[Pending] = [(letter, "%RETRY%G", 0) for letter in dead_letters(count)]
    pending[-1] = (pending[-1][0], "%RETRY%G", 3)  # a forced replay, the fourth
    chunk = ChunkBuilder("G", "retry", "ns", "ns.rmq.replay-log", OPERATOR).build(pending, 77)
    messages, pages = list(chunk.records), chunk.pages
    assert len(messages) == count
    assert {topic for topic, *_ in messages} == {"ns.rmq.retry.G"}
    assert [topic for topic, *_ in pages] == ["ns.rmq.replay-log"] * 3
    entries = [entry for _, value, _, _ in pages for entry in LedgerPage.decode(value).entries()]
    assert len(entries) == count
    for (_, body, _, headers), entry, (letter, _, _) in zip(
        messages, entries, pending, strict=True
    ):
        sent = props.from_headers(headers)
        assert body == letter.body and entry.dlq_id == letter.dlq_id
        assert sent[REPLAY_ID] == entry.key and sent[props.UNIQ_KEY] == entry.replayed_msg_id
        assert sent[REPLAY_TIME] == "77" == str(entry.when_ms)
        assert (entry.msg_id, entry.original_topic, entry.replayed_to) == (
            letter.msg_id,
            "Orders",
            "%RETRY%G",
        )
        assert (entry.who, entry.host, entry.command) == (
            OPERATOR.who,
            OPERATOR.host,
            OPERATOR.command,
        )
    assert entries[-1].replay == 3 and entries[-1].key.endswith("#3")
    assert len({entry.replayed_msg_id for entry in entries}) == count  # new ids, all distinct


def test_page_keys_are_never_reused_within_a_run_or_across_runs() -> None:
    pending: list[Pending] = [(letter, "%RETRY%G", 0) for letter in dead_letters(3)]
    keys = []
    for _ in range(2):
        builder = ChunkBuilder("G", "retry", "", "rmq.replay-log", OPERATOR)
        for _ in range(2):
            keys += [key for _, _, key, _ in builder.build(pending, 1).pages]
    assert len(keys) == len(set(keys)) == 4
    assert all(key is not None and key.startswith(b"G/") for key in keys)
