"""Recall handles as RocketMQ 5.5's broker reads them, and the forwarder's recall table."""

from __future__ import annotations

import base64

import pytest

from rmqcompat.forwarder.recalls import Recalled
from rmqcompat.v5.exceptions import InternalErrorException
from rmqcompat.v5.recall import checked, decode_handle, encode_handle

NOW = 1_800_000_000_000
LATER = NOW + 5_000


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode()


def test_a_handle_is_upstreams_v1_text_in_url_safe_base64_and_round_trips():
    handle = encode_handle("Orders", "kafka", LATER, "ID1")
    assert base64.urlsafe_b64decode(handle).decode() == f"v1 Orders kafka {LATER} ID1"
    parsed = checked(handle, "Orders", "kafka", NOW)
    assert (parsed.topic, parsed.broker_name, parsed.deliver_ms, parsed.message_id) == (
        "Orders",
        "kafka",
        LATER,
        "ID1",
    )


@pytest.mark.parametrize(
    "handle", [None, "", "!!!", _b64("v2 Orders kafka 1 ID"), _b64("v1 Orders kafka 1"), 42]
)
def test_a_handle_that_does_not_decode_is_invalid_with_code_50001(handle: object):
    with pytest.raises(InternalErrorException, match=r"^50001, recall handle is invalid$"):
        decode_handle(handle)


@pytest.mark.parametrize(
    ("handle", "problem"),
    [
        (encode_handle("Other", "kafka", LATER, "ID"), "recall failed, topic not match"),
        (encode_handle("Orders", "b2", LATER, "ID"), "broker service not available"),
        (encode_handle("Orders", "kafka", NOW, "ID"), "recall failed, timestamp invalid"),
        (encode_handle("Orders", "kafka", NOW - 1, "ID"), "timestamp invalid"),
        (encode_handle("Orders", "kafka", NOW + 3 * 86400_000, "ID"), "timestamp invalid"),
        (_b64("v1 Orders kafka soon ID"), "timestamp invalid"),
    ],
)
def test_the_broker_refuses_another_topic_broker_or_a_time_past_or_too_far(
    handle: str, problem: str
):
    with pytest.raises(InternalErrorException, match=problem) as refused:
        checked(handle, "Orders", "kafka", NOW)
    assert refused.value.code == 50001


def test_the_recall_table_takes_records_skips_bad_ones_and_forgets_old_ones():
    recalled = Recalled()
    recalled.add(b"A", str(NOW).encode())
    recalled.add(b"B", str(NOW + 7_200_000).encode())
    recalled.add(b"C", b"not a time")
    recalled.add(None, b"1")
    recalled.add(b"\xff", b"1")
    assert recalled.ids == {"A": NOW, "B": NOW + 7_200_000}
    recalled.forget_before(NOW + 3_600_000)  # A was due an hour ago: it cannot come any more
    assert recalled.ids == {"A": NOW, "B": NOW + 7_200_000}
    recalled.forget_before(NOW + 3_600_001)
    assert recalled.ids == {"B": NOW + 7_200_000}
