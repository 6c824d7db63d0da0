"""The replay ledger's format and the chunks a replay writes, without a broker: one page
per up to PAGE_SIZE replays, shared fields once, every replay findable by its REPLAY_ID."""

from __future__ import annotations

import json

import pytest
from unit_fakes import dead_letters

from rmqcompat import properties as props
from rmqcompat.dlq.chunk import ChunkBuilder, Operator, Pending
from rmqcompat.dlq.ledger import (
    COLUMNS,
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


def test_a_page_holds_the_shared_fields_once_and_one_row_per_replay() -> None:
    document = json.loads(PAGE.encode())
    assert set(document) == {"group", "who", "host", "when_ms", "command", "replays"}
    assert document["replays"] == [list(ROW), ["d@0@2", "M", "O", "T", "%RETRY%G", "N", 2]]
    assert all(len(row) == len(COLUMNS) for row in document["replays"])
    assert LedgerPage.decode(PAGE.encode()) == PAGE


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
    return json.dumps({**json.loads(PAGE.encode()), **changes}).encode()


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
        json.dumps({k: v for k, v in json.loads(PAGE.encode()).items() if k != "host"}).encode(),
    ],
)
def test_malformed_pages_are_refused(value: bytes) -> None:
    with pytest.raises(MalformedHeaderError):
        LedgerPage.decode(value)


def test_a_chunk_is_its_messages_then_its_pages_and_every_replay_is_in_a_page() -> None:
    count = 2 * PAGE_SIZE + 1
    pending: list[Pending] = [(letter, "%RETRY%G", 0) for letter in dead_letters(count)]
    pending[-1] = (pending[-1][0], "%RETRY%G", 3)  # a forced replay, the fourth
    chunk = ChunkBuilder("G", "retry", "ns", "ns.rmq.replay-log", OPERATOR).build(pending, 77)
    messages, pages = chunk.records[:count], chunk.records[count:]
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
            keys += [key for _, _, key, _ in builder.build(pending, 1).records[3:]]
    assert len(keys) == len(set(keys)) == 4
    assert all(key is not None and key.startswith(b"G/") for key in keys)
