"""Receipt handles and invisible time (a fixed clock), and the receive hand-over."""

from __future__ import annotations

import threading

import pytest

from rmqcompat.message import MessageExt
from rmqcompat.v5.exceptions import BadRequestException
from rmqcompat.v5.handoff import Handoff, Slot, SlotState
from rmqcompat.v5.leases import Leases, Outcome

KEY = ("T", 0)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _refused(leases: Leases, call, *args) -> None:
    with pytest.raises(BadRequestException) as caught:
        call(*args)
    assert caught.value.code == 40013


def test_ack_settles_once_tells_the_holder_and_the_handle_is_dead_after():
    leases = Leases(Clock())
    ended: list[int] = []
    lease_id, handle = leases.grant(10, "A", ended.append)
    assert leases.check(lease_id) == 110  # held: its deadline
    assert leases.ack(handle) == lease_id and ended == [lease_id]
    assert leases.check(lease_id) is Outcome.ACKED
    _refused(leases, leases.ack, handle)


def test_change_gives_a_new_handle_and_restarts_the_deadline_from_now():
    clock = Clock()
    leases = Leases(clock)
    lease_id, old = leases.grant(10)
    clock.now += 9
    new = leases.change(old, 10)
    assert new != old
    _refused(leases, leases.ack, old)
    _refused(leases, leases.change, old, 10)
    clock.now += 9  # 18 s after the grant, 9 s after the change: still held
    assert leases.check(lease_id) == clock.now + 1  # the new deadline
    leases.ack(new)
    assert leases.check(lease_id) is Outcome.ACKED


def test_a_lease_past_its_deadline_expires_and_its_handle_is_refused():
    clock = Clock()
    leases = Leases(clock)
    lease_id, handle = leases.grant(10)
    clock.now += 10
    _refused(leases, leases.ack, handle)
    assert leases.check(lease_id) is Outcome.EXPIRED
    _refused(leases, leases.ack, "no such handle")


def test_expire_all_of_one_owner_leaves_the_others_held_and_tells_the_holder():
    leases = Leases(Clock())
    ended: list[int] = []
    a, _ = leases.grant(10, "A", ended.append)
    _, b_handle = leases.grant(10, "B", ended.append)
    assert leases.expire_all("A") == 1
    assert ended == [a]
    assert leases.check(a) is Outcome.EXPIRED
    assert leases.held() == 1
    leases.ack(b_handle)


def test_expire_ends_only_the_named_leases_and_kills_their_handles():
    leases = Leases(Clock())
    a, a_handle = leases.grant(10, "A")
    b, b_handle = leases.grant(10, "A")
    assert leases.expire([a, 99]) == 1  # an unknown id is ignored
    assert leases.check(a) is Outcome.EXPIRED
    _refused(leases, leases.ack, a_handle)
    assert leases.expire([a]) == 0  # already over
    leases.ack(b_handle)
    assert leases.check(b) is Outcome.ACKED


def _ext(offset: int) -> MessageExt:
    return MessageExt("T", b"b", f"id{offset}", 0, offset, 0, 0)


def test_take_leases_slots_in_arrival_order_and_abandon_gives_back_the_rest():
    handoff = Handoff(Leases(Clock()))
    changed: list[Slot] = []
    slots = [Slot(_ext(i), "A", KEY, changed.append) for i in range(3)]
    for slot in slots:
        handoff.offer(slot)
    taken = handoff.take(2, 0, 30)
    assert [s.message.queue_offset for s in taken] == [0, 1]
    assert all(s.state is SlotState.TAKEN and s.handle for s in taken)
    assert changed == taken
    handoff.abandon("A")
    assert slots[2].state is SlotState.ABANDONED
    assert changed[2:] == [slots[2], taken[0], taken[1]]  # given back; leases ended
    assert handoff.leases.check(taken[0].lease_id) is Outcome.EXPIRED
    late = Slot(_ext(9), "A", KEY, changed.append)
    handoff.offer(late)  # the owner is closed: given back at once
    assert late.state is SlotState.ABANDONED and handoff.waiting() == 0


def test_take_waits_for_the_first_slot():
    handoff = Handoff(Leases())
    threading.Timer(0.05, handoff.offer, (Slot(_ext(1), "A", KEY, lambda _s: None),)).start()
    assert len(handoff.take(5, 30, 30)) == 1
