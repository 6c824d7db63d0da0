"""Only the contiguous prefix of finished records is committed, whatever the report order."""

from rmqcompat.forwarder.commit_tracker import CommitTracker, PartitionOffsets


def test_nothing_to_commit_before_the_first_finish() -> None:
    state = PartitionOffsets()
    state.track(5)
    assert state.uncommitted_position() is None


def test_out_of_order_reports_commit_only_the_prefix() -> None:
    state = PartitionOffsets()
    for offset in (10, 11, 12, 13):
        state.track(offset)
    state.finish(12)
    state.finish(13)
    assert state.uncommitted_position() is None  # 10 and 11 are still in flight
    state.finish(10)
    assert state.uncommitted_position() == 11
    state.finish(11)
    assert state.uncommitted_position() == 14
    assert state.pending == 0


def test_offset_gaps_do_not_block_the_prefix() -> None:
    # Transaction markers and compaction leave holes in a partition's offsets.
    state = PartitionOffsets()
    for offset in (3, 7, 8):
        state.track(offset)
    state.finish(3)
    assert state.uncommitted_position() == 4
    state.finish(8)
    assert state.uncommitted_position() == 4
    state.finish(7)
    assert state.uncommitted_position() == 9


def test_re_read_records_are_refused() -> None:
    state = PartitionOffsets()
    assert state.track(1)
    assert state.track(2)
    assert not state.track(2)
    assert not state.track(1)
    assert state.track(3)


def test_committed_position_is_not_reported_again_and_never_moves_back() -> None:
    state = PartitionOffsets()
    state.track(0)
    state.finish(0)
    state.committed(1)
    assert state.uncommitted_position() is None
    state.committed(0)  # a late, older acknowledgement must not move it back
    state.track(1)
    state.finish(1)
    assert state.uncommitted_position() == 2


def test_tracker_reports_moved_partitions_only() -> None:
    tracker = CommitTracker()
    a, b = tracker.assign(("t", 0)), tracker.assign(("t", 1))
    a.track(0)
    b.track(0)
    a.finish(0)
    assert tracker.to_commit() == {("t", 0): 1}
    tracker.drop(("t", 0))
    assert tracker.to_commit() == {}
    assert ("t", 1) in tracker.partitions
