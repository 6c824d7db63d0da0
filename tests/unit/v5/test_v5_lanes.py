"""FIFO lanes: one message of a (partition, group) with the listener at a time."""

from __future__ import annotations

from rmqcompat.message import MessageExt
from rmqcompat.process_queue import ProcessQueue
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.v5.backoff import CustomizedBackoff
from rmqcompat.v5.lanes import Lanes
from rmqcompat.v5.message import MESSAGE_GROUP

P0 = ("t", 0)


def _msg(offset: int, group: str | None) -> MessageExt:
    properties = {MESSAGE_GROUP: group} if group else {}
    return MessageExt("T", b"b", f"id{offset}", 0, offset, 0, 0, properties=properties)


def _offsets(msgs):
    return [m.queue_offset for m in msgs]


def test_one_message_per_group_runs_and_ungrouped_ones_pass_at_once():
    lanes, pq = Lanes(), ProcessQueue()
    batch = [_msg(0, "a"), _msg(1, "a"), _msg(2, "b"), _msg(3, None), _msg(4, "a")]
    assert _offsets(lanes.admit(P0, pq, batch)) == [0, 2, 3]
    assert lanes.waiting() == 2
    assert _offsets([lanes.release(P0, batch[0])]) == [1]
    assert lanes.release(P0, batch[2]) is None  # b had nothing waiting
    assert _offsets([lanes.release(P0, batch[1])]) == [4]
    assert lanes.release(P0, batch[4]) is None
    assert _offsets(lanes.admit(P0, pq, [_msg(5, "a")])) == [5]  # lane a is free again


def test_a_stuck_group_never_holds_back_another_group_of_the_partition():
    lanes, pq = Lanes(), ProcessQueue()
    lanes.admit(P0, pq, [_msg(0, "stuck")])
    later = [_msg(i, "stuck" if i % 2 else "ok") for i in range(1, 21)]
    admitted = lanes.admit(P0, pq, later)
    assert [m.properties[MESSAGE_GROUP] for m in admitted] == ["ok"]
    ok = admitted[0]
    for _ in range(9):
        ok = lanes.release(P0, ok)
        assert ok is not None and ok.properties[MESSAGE_GROUP] == "ok"
    assert lanes.waiting() == 10  # only the stuck group's messages wait


def test_revoked_or_reassigned_partitions_forget_their_lanes():
    lanes = Lanes()
    lanes.admit(P0, ProcessQueue(), [_msg(0, "a"), _msg(1, "a")])
    lanes.drop({("t", 1)})
    assert lanes.waiting() == 0
    first = ProcessQueue()
    lanes.admit(P0, first, [_msg(0, "a"), _msg(1, "a")])
    # the partition came back with a new process queue: the old lane's waiters are stale
    assert _offsets(lanes.admit(P0, ProcessQueue(), [_msg(0, "a")])) == [0]
    assert lanes.waiting() == 0


def test_customized_backoff_waits_level_n_after_attempt_n_and_the_last_beyond():
    backoff = CustomizedBackoff(DelayLevels.parse(), 17)
    waits = [backoff.get_next_attempt_delay(n) for n in (1, 2, 3, 4, 5, 18, 30)]
    assert waits == [1, 5, 10, 30, 60, 7200, 7200]
