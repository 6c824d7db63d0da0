"""Exported dead-letter files: JSON Lines and Avro round trips, edits, bad input, atomic writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rmqcompat.dlq.files import read_dead_letters_file, write_dead_letters
from rmqcompat.dlq.model import DeadLetter
from rmqcompat.errors import ConfigError

LETTERS = [
    DeadLetter("G", "ns.rmq.dlq.G", 0, 3, 1000, b"\x00\xffbin", b"k", (("UNIQ_KEY", b"A"),)),
    DeadLetter("G", "ns.rmq.dlq.G", 1, 9, 2000, b"", None, (("x", None), ("y", b"\xfe"))),
]


@pytest.mark.parametrize("name", ["d.jsonl", "d.ndjson", "d.json", "d.avro", "D.AVRO"])
def test_round_trip_keeps_every_byte(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    assert write_dead_letters(path, iter(LETTERS)) == 2
    assert read_dead_letters_file(path) == LETTERS


def test_json_lines_show_derived_fields_but_headers_decide(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    write_dead_letters(path, LETTERS[:1])
    row = json.loads(path.read_text())
    assert row["msg_id"] == "A" and row["body"] == "AP9iaW4="
    row["msg_id"] = "ignored"
    row["headers"] = [{"name": "UNIQ_KEY", "value": "Qg=="}]  # "B"
    path.write_text(json.dumps(row) + "\n\n")
    (read,) = read_dead_letters_file(path)
    assert read.msg_id == "B"


def test_unknown_extension_is_refused_before_writing(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\.jsonl.*\.avro"):
        write_dead_letters(tmp_path / "d.csv", LETTERS)
    assert list(tmp_path.iterdir()) == []


def test_a_failure_part_way_leaves_no_file_and_an_old_one_untouched(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text("old\n")

    def broken():
        yield LETTERS[0]
        raise RuntimeError("broker went away")

    with pytest.raises(RuntimeError):
        write_dead_letters(path, broken())
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["d.jsonl"]


@pytest.mark.parametrize(
    ("name", "content", "where"),
    [
        ("d.jsonl", '{"group": "G"}\n', "d.jsonl:1"),
        ("d.jsonl", "\nnot json\n", "d.jsonl:2"),
        ("d.avro", "not avro", "not a dead-letter Avro file"),
    ],
)
def test_a_file_that_is_not_dead_letters_names_where(
    tmp_path: Path, name: str, content: str, where: str
) -> None:
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(ConfigError, match=where):
        read_dead_letters_file(path)
