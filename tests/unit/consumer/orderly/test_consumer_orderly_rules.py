"""Orderly consumption's pure rules: the suspension clamp, status mapping, the orderly
reconsume limit and which messages of a suspended batch are dead-lettered."""

from __future__ import annotations

import logging

import pytest

from rmqcompat.config import ClientConfig
from rmqcompat.consumer.listener import ConsumeOrderlyContext, ConsumeOrderlyStatus
from rmqcompat.consumer.orderly.rules import (
    SUSPEND_MAX_MS,
    SUSPEND_MIN_MS,
    as_orderly_status,
    invoke_orderly,
    orderly_max_reconsume_times,
    split_suspended,
    suspend_millis,
)
from rmqcompat.message import MessageExt, MessageQueue
from rmqcompat.retry import RetryPolicy

SUCCESS = ConsumeOrderlyStatus.SUCCESS
SUSPEND = ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT
LEVELS = ClientConfig("127.0.0.1:1").levels


@pytest.mark.parametrize(
    ("requested", "expected"),
    [
        (-1, 1000),  # RocketMQ's -1: the consumer's default
        (0, SUSPEND_MIN_MS),
        (-5, SUSPEND_MIN_MS),
        (1, 10),
        (10, 10),
        (11, 11),
        (300, 300),
        (30_000, 30_000),
        (30_001, SUSPEND_MAX_MS),
        (10**12, 30_000),
        (250.7, 250),  # a float is truncated
    ],
)
def test_the_suspension_is_the_contexts_value_clamped_to_10_to_30000_ms(requested, expected):
    assert suspend_millis(requested, 1000) == expected


def test_the_default_suspension_is_clamped_too():
    assert suspend_millis(-1, default_ms=5) == 10
    assert suspend_millis(-1, default_ms=40_000) == 30_000


@pytest.mark.parametrize("bad", ["500", None, float("nan"), float("inf"), True])
def test_a_suspension_that_is_no_number_counts_as_the_default_with_a_warning(bad, caplog):
    with caplog.at_level(logging.WARNING, "rmqcompat.consumer"):
        assert suspend_millis(bad, 1000) == 1000
    assert "suspend_current_queue_time_millis" in caplog.text


def test_minus_one_means_unlimited_for_orderly_consumers_other_limits_stay():
    assert orderly_max_reconsume_times(-1) == 2**31 - 1
    assert orderly_max_reconsume_times(0) == 0
    assert orderly_max_reconsume_times(3) == 3


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (SUCCESS, SUCCESS),
        (SUSPEND, SUSPEND),
        (None, SUSPEND),
        ("SUCCESS", SUSPEND),  # only the enum member counts
        (True, SUSPEND),
        (object(), SUSPEND),
    ],
)
def test_anything_but_success_suspends(result, expected):
    assert as_orderly_status(result) is expected


def _msg(offset: int, reconsume_times: int = 0) -> MessageExt:
    return MessageExt("T", b"x", f"m{offset}", 0, offset, 0, 0, reconsume_times)


def test_invoke_maps_none_and_exceptions_to_suspend_and_logs_ids(caplog):
    ctx = ConsumeOrderlyContext(MessageQueue("T", 2))

    def boom(msgs, context):
        raise ValueError("bad")

    with caplog.at_level(logging.WARNING, "rmqcompat.consumer"):
        assert invoke_orderly(boom, "g", [_msg(7)], ctx) == (SUSPEND, True)
        assert invoke_orderly(lambda m, c: None, "g", [_msg(8)], ctx) == (SUSPEND, False)
        assert invoke_orderly(lambda m, c: SUCCESS, "g", [_msg(9)], ctx) == (SUCCESS, False)
    assert "m7" in caplog.text and "partition=2" in caplog.text and "ValueError" in caplog.text
    assert "returned None" in caplog.text and "m8" in caplog.text
    assert "m9" not in caplog.text


def test_invoke_logs_nothing_for_an_explicit_suspension(caplog):
    ctx = ConsumeOrderlyContext(MessageQueue("T", 0))
    with caplog.at_level(logging.WARNING, "rmqcompat.consumer"):
        assert invoke_orderly(lambda m, c: SUSPEND, "g", [_msg(1)], ctx) == (SUSPEND, False)
    assert caplog.text == ""


def test_a_suspended_batch_dead_letters_only_messages_at_the_limit_keeping_order():
    policy = RetryPolicy("g", LEVELS, max_reconsume_times=2, orderly=True)
    msgs = [_msg(1, 0), _msg(2, 2), _msg(3, 1), _msg(4, 5)]
    outcome = split_suspended(msgs, policy)
    assert [m.queue_offset for m in outcome.retry] == [1, 3]
    assert [m.queue_offset for m in outcome.dead] == [2, 4]
    assert [m.reconsume_times for m in msgs] == [0, 2, 1, 5]  # counting is the caller's


def test_with_dead_lettering_off_messages_at_the_limit_leave_the_partition_too():
    policy = RetryPolicy("g", LEVELS, max_reconsume_times=0, dead_letter=False, orderly=True)
    outcome = split_suspended([_msg(1)], policy)
    assert outcome.retry == () and [m.queue_offset for m in outcome.dead] == [1]


def test_an_unlimited_policy_never_dead_letters():
    policy = RetryPolicy(
        "g", LEVELS, max_reconsume_times=orderly_max_reconsume_times(-1), orderly=True
    )
    outcome = split_suspended([_msg(1, 10_000), _msg(2, 2**31 - 2)], policy)
    assert outcome.dead == ()
