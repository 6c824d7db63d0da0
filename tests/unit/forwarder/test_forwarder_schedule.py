"""Due decision, clock-skew correction and wake-up scheduling with a fixed clock."""

import pytest

from rmqcompat.forwarder.schedule import (
    CLOCK_JUMP_MS,
    WakeSchedule,
    corrected_due,
    is_due,
    lateness_s,
)

NOW = 1_700_000_000_000
DELAY = 10_000


@pytest.mark.parametrize(
    ("due", "expected"),
    [
        (NOW - 5, NOW - 5),  # overdue: kept (lateness is measured from it)
        (NOW, NOW),
        (NOW + DELAY, NOW + DELAY),  # exactly one delay ahead: legitimate
        (NOW + DELAY + 1, NOW + DELAY + 1),  # skew between hosts: waited out, never early
        (NOW + DELAY + CLOCK_JUMP_MS, NOW + DELAY + CLOCK_JUMP_MS),
        (NOW + DELAY + CLOCK_JUMP_MS + 1, NOW),  # a clock jump: due now (RocketMQ's rule)
        (NOW + 50 * CLOCK_JUMP_MS, NOW),
    ],
)
def test_corrected_due(due: int, expected: int) -> None:
    assert corrected_due(due, NOW, DELAY) == expected


def test_is_due_at_and_after_due_time_only() -> None:
    assert is_due(NOW, NOW)
    assert is_due(NOW - 1, NOW)
    assert not is_due(NOW + 1, NOW)


def test_head_beyond_a_clock_jump_is_due_now() -> None:
    assert is_due(corrected_due(NOW + DELAY + CLOCK_JUMP_MS + 1, NOW, DELAY), NOW)
    assert not is_due(corrected_due(NOW + DELAY + 1, NOW, DELAY), NOW)


def test_pop_due_returns_due_keys_earliest_first() -> None:
    wakes = WakeSchedule()
    wakes.wake("b", NOW + 20)
    wakes.wake("a", NOW + 10)
    wakes.wake("c", NOW + 30)
    assert wakes.pop_due(NOW + 9) == []
    assert wakes.pop_due(NOW + 20) == ["a", "b"]
    assert "c" in wakes and "a" not in wakes
    assert wakes.pop_due(NOW + 30) == ["c"]
    assert len(wakes) == 0


def test_rescheduling_replaces_the_earlier_wake() -> None:
    wakes = WakeSchedule()
    wakes.wake("p", NOW + 10)
    wakes.wake("p", NOW + 50)
    assert wakes.pop_due(NOW + 10) == []
    assert wakes.next_wake_ms() == NOW + 50
    assert wakes.pop_due(NOW + 50) == ["p"]


def test_cancel_drops_the_wake() -> None:
    wakes = WakeSchedule()
    wakes.wake("p", NOW + 10)
    wakes.cancel("p")
    assert wakes.pop_due(NOW + 100) == []
    assert wakes.next_wake_ms() is None


@pytest.mark.parametrize(
    ("wake_at", "expected"),
    [(None, 1.0), (NOW + 250, 0.25), (NOW + 5000, 1.0), (NOW - 10, 0.0), (NOW, 0.0)],
)
def test_poll_timeout_is_bounded_by_the_next_wake(wake_at: int | None, expected: float) -> None:
    wakes = WakeSchedule()
    if wake_at is not None:
        wakes.wake("p", wake_at)
    assert wakes.poll_timeout_s(NOW, max_wait_s=1.0) == pytest.approx(expected)


def test_lateness_is_seconds_past_the_due_time_and_never_negative() -> None:
    assert lateness_s(1_000, 1_500) == 0.5
    assert lateness_s(1_500, 1_000) == 0.0
    assert lateness_s(1_000, 1_000) == 0.0
