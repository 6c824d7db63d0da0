import json

from rmqcompat.consumer.offset_store import LocalFileOffsetStore


def test_persist_is_atomic_and_keeps_previous_as_bak(tmp_path):
    store = LocalFileOffsetStore(tmp_path / "g" / "offsets.json")
    store.persist({("t", 0): 5})
    store.persist({("t", 0): 9, ("t", 1): 2})
    assert store.load() == {("t", 0): 9, ("t", 1): 2}
    bak = json.loads((tmp_path / "g" / "offsets.json.bak").read_text())
    assert bak == {"offsets": {"t": {"0": 5}}}
    assert not (tmp_path / "g" / "offsets.json.tmp").exists()


def test_corrupt_file_falls_back_to_bak(tmp_path):
    store = LocalFileOffsetStore(tmp_path / "offsets.json")
    store.persist({("t", 0): 5})
    store.persist({("t", 0): 6})
    (tmp_path / "offsets.json").write_text("{half a wri")
    assert store.load() == {("t", 0): 5}


def test_missing_file_is_empty(tmp_path):
    assert LocalFileOffsetStore(tmp_path / "none.json").load() == {}
