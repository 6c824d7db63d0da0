"""The durable spool: atomic one-file-per-message store, exact round trip, safe listing."""

from __future__ import annotations

import os

import pytest

from rmqcompat.producer.spool import Spool, SpoolCorruptError, SpoolEntry
from rmqcompat.wire import OutgoingRecord


def entry(msg_id: str = "ABC", at: int = 1000, key: bytes | None = b"k") -> SpoolEntry:
    record = OutgoingRecord(
        topic="ns.rmq.delay.10s",
        value=b"\x00\x01binary\xff",
        key=key,
        headers=[("UNIQ_KEY", msg_id.encode()), ("TAGS", "é".encode()), ("EMPTY", b"")],
    )
    return SpoolEntry(msg_id, record, at, code="_MSG_TIMED_OUT", attempts=3)


def test_constructor_does_no_io(tmp_path):
    spool = Spool(tmp_path / "not-yet")
    assert not (tmp_path / "not-yet").exists()
    assert spool.list() == []
    assert len(spool) == 0


def test_round_trip_keeps_the_exact_record_and_metadata(tmp_path):
    spool = Spool(tmp_path / "spool")
    original = entry(key=None)
    path = spool.put(original)
    assert path.parent == tmp_path / "spool"
    assert spool.list() == [original]
    assert spool.load(path) == original
    assert original.namespace_and_topic == ("ns", "%SCHEDULE%10s")


def test_write_leaves_no_temporary_file_and_list_ignores_stale_ones(tmp_path):
    spool = Spool(tmp_path)
    spool.put(entry())
    assert [p.name for p in tmp_path.iterdir()] == [entry().name]
    # a crash between write and rename leaves a temp file: never listed, never re-sent
    (tmp_path / ".tmp-000000000000001-XYZ.json").write_bytes(b'{"half":')
    assert spool.list() == [entry()]
    assert len(spool) == 1


def test_entries_are_listed_oldest_first(tmp_path):
    spool = Spool(tmp_path)
    for msg_id, at in (("C", 3000), ("A", 1000), ("B", 2000)):
        spool.put(entry(msg_id, at))
    assert [e.msg_id for e in spool.list()] == ["A", "B", "C"]


def test_corrupt_file_is_skipped_by_list_and_left_in_place(tmp_path, caplog):
    spool = Spool(tmp_path)
    spool.put(entry("GOOD"))
    bad = tmp_path / "000000000000002-BAD.json"
    bad.write_bytes(b"not json")
    assert [e.msg_id for e in spool.list()] == ["GOOD"]
    assert bad.exists()
    assert "not a valid entry" in caplog.text
    with pytest.raises(SpoolCorruptError):
        spool.load(bad)


def test_remove_deletes_only_that_entry_and_is_idempotent(tmp_path):
    spool = Spool(tmp_path)
    first, second = entry("A", 1), entry("B", 2)
    spool.put(first)
    spool.put(second)
    spool.remove(first)
    spool.remove(first)
    assert spool.list() == [second]


def test_put_is_durable_via_fsync_and_rename(tmp_path, monkeypatch):
    calls: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(
        os, "replace", lambda a, b: (calls.append("replace"), real_replace(a, b))[1]
    )
    Spool(tmp_path).put(entry())
    # file data synced before the rename publishes it; directory synced after
    assert calls == ["fsync", "replace", "fsync"]
