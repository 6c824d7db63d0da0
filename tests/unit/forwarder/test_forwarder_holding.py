"""Per-partition hold caps: when a partition is full (records or bytes) and when it resumes."""

import pytest
from confluent_kafka import Message

from rmqcompat.errors import ConfigError
from rmqcompat.forwarder import DelayForwarder
from rmqcompat.forwarder.holding import (
    DEFAULT_MAX_HELD,
    DEFAULT_MAX_HELD_BYTES,
    HeldRecords,
    HoldLimits,
    record_size,
)

LIMITS = HoldLimits(max_records=10, max_bytes=1000)


def record(value: bytes | None = b"", key: bytes | None = None, headers=None) -> Message:
    return Message(topic="t", partition=0, offset=0, value=value, key=key, headers=headers)


def test_defaults_hold_rate_times_delay_of_ordinary_traffic_within_rocketmq_size_cap() -> None:
    # 1s level at 1,250 msg/s per partition must fit; RocketMQ allows 100 MiB per queue.
    assert DEFAULT_MAX_HELD == 10_000
    assert DEFAULT_MAX_HELD_BYTES == 64 * 1024 * 1024
    assert HoldLimits() == HoldLimits(DEFAULT_MAX_HELD, DEFAULT_MAX_HELD_BYTES)


@pytest.mark.parametrize(
    ("records", "size", "full"),
    [
        (0, 0, False),
        (0, 5000, False),  # an empty partition always admits its next record
        (9, 999, False),
        (10, 0, True),  # record cap
        (1, 1000, True),  # byte cap, reached by a single large record
        (3, 1500, True),
        (11, 2000, True),
    ],
)
def test_full_when_either_cap_is_reached(records: int, size: int, full: bool) -> None:
    assert LIMITS.full(records, size) is full


@pytest.mark.parametrize(
    ("records", "size", "resume"),
    [
        (0, 0, True),
        (5, 500, True),  # both at half: resume
        (6, 0, False),  # records above half
        (0, 501, False),  # bytes above half
        (9, 999, False),  # below the caps but above half: stay paused (hysteresis)
    ],
)
def test_resume_only_when_both_counts_are_down_to_half(
    records: int, size: int, resume: bool
) -> None:
    assert LIMITS.may_resume(records, size) is resume


def test_a_cap_of_one_record_resumes_only_when_empty() -> None:
    limits = HoldLimits(max_records=1)
    assert limits.full(1, 1)
    assert not limits.may_resume(1, 1)
    assert limits.may_resume(0, 0)


@pytest.mark.parametrize("kwargs", [{"max_records": 0}, {"max_bytes": 0}, {"max_bytes": -1}])
def test_caps_below_one_are_config_errors(kwargs: dict) -> None:
    with pytest.raises(ConfigError):
        HoldLimits(**kwargs)


@pytest.mark.parametrize(
    "kwargs", [{"max_held_per_partition": 0}, {"max_held_bytes_per_partition": 0}]
)
def test_forwarder_rejects_bad_caps_before_any_io(kwargs: dict) -> None:
    with pytest.raises(ConfigError):
        DelayForwarder("127.0.0.1:1", **kwargs)


def test_record_size_counts_value_key_and_headers() -> None:
    headers = [("DUE_TIME", b"1700000000000"), ("empty", None)]
    msg = record(b"x" * 100, b"key", headers)
    assert record_size(msg, msg.headers()) == 100 + 3 + len("DUE_TIME") + 13 + len("empty")
    assert record_size(record(None), None) == 0


def test_held_records_track_their_size_and_pause_on_bytes_before_records() -> None:
    held = HeldRecords(LIMITS)
    for _ in range(4):
        held.append(record(b"x" * 250))
    assert (len(held), held.size) == (4, 1000)
    assert held.full  # 4 records, far below the record cap: the byte cap decides
    held.popleft()
    assert not held.full
    assert not held.may_resume  # 750 bytes > half of 1000
    held.popleft()
    assert held.may_resume
    held.popleft()
    held.popleft()
    assert (len(held), held.size) == (0, 0)


def test_held_records_keep_read_order_with_the_headers_read_at_intake() -> None:
    held = HeldRecords(LIMITS)
    first, second = record(b"1", headers=[("A", b"1")]), record(b"2")
    held.append(first)
    held.append(second)
    assert held.head() == (first, [("A", b"1")])
    held.popleft()
    assert held.head() == (second, None)


def test_a_run_takes_records_off_the_head_and_their_size_with_them() -> None:
    held = HeldRecords(LIMITS)
    first, second = record(b"x" * 300), record(b"y" * 200)
    held.append(first)
    held.append(second)

    def take_first(records, expected) -> tuple[int, int]:
        assert records.popleft()[0] is expected
        return 1, 300

    assert held.take_run(take_first, first) == 1
    assert (len(held), held.size, held.head()) == (1, 200, (second, None))
