"""Send-back routing, table-driven (SEMANTICS section 4, RocketMQ's consumerSendMsgBack)."""

from __future__ import annotations

import pytest

from rmqcompat import properties as props
from rmqcompat.message import MessageExt
from rmqcompat.retry import (
    Destination,
    DestinationKind,
    RetryPolicy,
    dead_letter_properties,
    route_failed,
    sendback_properties,
)
from rmqcompat.topics.delay_levels import DelayLevels

LEVELS = DelayLevels.parse()
POLICY = RetryPolicy("G", LEVELS)
DELAY, DLQ, DISCARD = DestinationKind.DELAY, DestinationKind.DLQ, DestinationKind.DISCARD
SUSPEND = DestinationKind.SUSPEND


def test_default_max_reconsume_times_is_16() -> None:
    assert POLICY.max_reconsume_times == 16
    assert POLICY.dead_letter is True


@pytest.mark.parametrize(
    ("reconsume_times", "level"),
    [(0, 3), (1, 4), (2, 5), (5, 8), (10, 13), (14, 17), (15, 18)],
)
def test_reconsume_n_below_max_parks_on_level_3_plus_n(reconsume_times: int, level: int) -> None:
    assert route_failed(POLICY, reconsume_times) == Destination(DELAY, "%RETRY%G", level)


def test_every_retry_below_max_goes_to_the_retry_topic_capped_at_level_18() -> None:
    levels = [route_failed(POLICY, n).level for n in range(16)]
    assert levels == [min(3 + n, 18) for n in range(16)]
    lenient = RetryPolicy("G", LEVELS, max_reconsume_times=100)
    assert route_failed(lenient, 50) == Destination(DELAY, "%RETRY%G", 18)


@pytest.mark.parametrize("reconsume_times", [16, 17, 1000])
def test_reconsume_at_or_above_max_goes_to_the_dlq(reconsume_times: int) -> None:
    assert route_failed(POLICY, reconsume_times).kind == DLQ
    assert route_failed(POLICY, reconsume_times).real_topic == "%DLQ%G"


def _deliveries(max_reconsume_times: int) -> int:
    """Deliver a message that always fails until it leaves the retry loop."""
    policy = RetryPolicy("G", LEVELS, max_reconsume_times=max_reconsume_times)
    deliveries, reconsume_times = 0, 0
    while True:
        deliveries += 1
        if route_failed(policy, reconsume_times).kind is not DELAY:
            return deliveries
        reconsume_times += 1


@pytest.mark.parametrize(("max_times", "deliveries"), [(0, 1), (1, 2), (3, 4), (16, 17)])
def test_max_reconsume_times_bounds_deliveries(max_times: int, deliveries: int) -> None:
    assert _deliveries(max_times) == deliveries


@pytest.mark.parametrize(
    ("reconsume_times", "delay_level", "expected"),
    [
        (0, -1, Destination(DLQ, "%DLQ%G")),
        (5, -1, Destination(DLQ, "%DLQ%G")),
        (0, 1, Destination(DELAY, "%RETRY%G", 1)),
        (7, 2, Destination(DELAY, "%RETRY%G", 2)),
        (0, 18, Destination(DELAY, "%RETRY%G", 18)),
        (0, 40, Destination(DELAY, "%RETRY%G", 18)),
        (16, 5, Destination(DLQ, "%DLQ%G")),  # exhausted wins over a requested level
    ],
)
def test_requested_delay_level(reconsume_times: int, delay_level: int, expected: object) -> None:
    assert route_failed(POLICY, reconsume_times, delay_level) == expected


@pytest.mark.parametrize(("reconsume_times", "delay_level"), [(16, 0), (0, -1)])
def test_dead_letter_off_discards(reconsume_times: int, delay_level: int) -> None:
    policy = RetryPolicy("G", LEVELS, dead_letter=False)
    assert route_failed(policy, reconsume_times, delay_level).kind == DISCARD
    assert route_failed(policy, 0).kind == DELAY


def test_short_table_caps_at_its_own_top_level() -> None:
    policy = RetryPolicy("G", DelayLevels.parse("100ms 200ms 300ms 400ms"))
    assert [route_failed(policy, n).level for n in range(4)] == [3, 4, 4, 4]


def test_negative_max_reconsume_times_is_refused() -> None:
    with pytest.raises(ValueError, match="max_reconsume_times"):
        RetryPolicy("G", LEVELS, max_reconsume_times=-1)


# --- properties of the sent-back message -----------------------------------------------


def _failed(reconsume_times: int = 0, **properties: str) -> MessageExt:
    return MessageExt(
        topic="T",
        body=b"body",
        msg_id="MSG1",
        queue_id=0,
        queue_offset=3,
        born_timestamp=1234,
        store_timestamp=5678,
        reconsume_times=reconsume_times,
        properties={props.UNIQ_KEY: "MSG1", **properties},
    )


def test_first_sendback_records_origin_and_counts() -> None:
    out = sendback_properties(_failed(0, TAGS="A", user="u"), "T")
    assert out[props.RETRY_TOPIC] == "T"
    assert out[props.ORIGIN_MESSAGE_ID] == "MSG1"
    assert out[props.RECONSUME_TIME] == "1"
    assert props.MAX_RECONSUME_TIMES not in out  # RocketMQ stores no limit on the message
    assert out[props.TAGS] == "A" and out["user"] == "u"
    assert out[props.UNIQ_KEY] == "MSG1"
    assert out[props.BORN_TIMESTAMP] == "1234"


@pytest.mark.parametrize(
    ("receipt_handles", "group", "counted"),
    [(False, None, "3"), (True, None, "4"), (True, "G1", "3"), (False, "G1", "3")],
)
def test_a_rocketmq_5_dead_letter_without_a_message_group_counts_the_revive(
    receipt_handles: bool, group: str | None, counted: str
) -> None:
    """RocketMQ 5.5.0 (receipt handles) dead-letters a non-FIFO message after its revive
    wrote the last failure back once more: one reconsume more than 4.x and FIFO."""
    extra = {} if group is None else {props.SHARDING_KEY: group}
    policy = RetryPolicy("G", LEVELS, 2, receipt_handles=receipt_handles)
    out = dead_letter_properties(_failed(2, **extra), policy, "T")
    assert out[props.RECONSUME_TIME] == counted
    assert (
        dead_letter_properties(_failed(0, **extra), policy, "T", 2)[props.RECONSUME_TIME] == counted
    )


def test_later_sendbacks_keep_the_first_retry_topic_and_origin_id() -> None:
    failed = _failed(
        4,
        RETRY_TOPIC="First",
        ORIGIN_MESSAGE_ID="ORIG",
        RECONSUME_TIME="4",
        MAX_RECONSUME_TIMES="7",  # as an earlier rmqcompat wrote it
    )
    out = sendback_properties(failed, "Other")
    assert out[props.RETRY_TOPIC] == "First"
    assert out[props.ORIGIN_MESSAGE_ID] == "ORIG"
    assert out[props.RECONSUME_TIME] == "5"
    assert props.MAX_RECONSUME_TIMES not in out


def test_sendback_strips_every_parking_property() -> None:
    parked = {
        props.REAL_TOPIC: "%RETRY%G",
        props.REAL_QID: "2",
        props.DELAY: "3",
        props.DUE_TIME: "999",
        props.TIMER_DELIVER_MS: "999",
    }
    out = sendback_properties(_failed(1, **parked), "T")
    assert not set(parked) & set(out)


def test_sendback_does_not_modify_the_failed_message() -> None:
    failed = _failed(0, DELAY="3")
    before = dict(failed.properties)
    sendback_properties(failed, "T")
    assert failed.properties == before


def _mode_policy(mode: str, max_reconsume_times: int = 3, dead_letter: bool = True) -> RetryPolicy:
    return RetryPolicy(
        "G",
        LEVELS,
        max_reconsume_times,
        dead_letter,
        orderly=mode.startswith("orderly"),
        broadcasting=mode.endswith("broadcasting"),
    )


#: (mode, dead_letter, stored reconsume count, requested level) -> kind, level, reason;
#: max_reconsume_times is 3 throughout.
_MODES = [
    # concurrent CLUSTERING: the broker's consumerSendMsgBack
    ("concurrent", True, 0, 0, DELAY, 3, ""),
    ("concurrent", True, 2, 0, DELAY, 5, ""),
    ("concurrent", True, 1, 7, DELAY, 7, ""),
    ("concurrent", True, 3, 0, DLQ, 0, ""),
    ("concurrent", True, 0, -1, DLQ, 0, ""),
    ("concurrent", False, 3, 0, DISCARD, 0, "dead_letter is off"),
    ("concurrent", False, 0, -1, DISCARD, 0, "dead_letter is off"),
    # concurrent BROADCASTING: dropped at the first failure, whatever the count or level
    ("concurrent broadcasting", True, 0, 0, DISCARD, 0, "BROADCASTING"),
    ("concurrent broadcasting", True, 3, -1, DISCARD, 0, "BROADCASTING"),
    ("concurrent broadcasting", True, 0, 3, DISCARD, 0, "BROADCASTING"),
    # orderly: in place until the limit, then the DLQ; a requested level means nothing
    ("orderly", True, 0, 0, SUSPEND, 0, ""),
    ("orderly", True, 2, -1, SUSPEND, 0, ""),
    ("orderly", True, 2, 5, SUSPEND, 0, ""),
    ("orderly", True, 3, 0, DLQ, 0, ""),
    ("orderly", False, 3, 0, DISCARD, 0, "dead_letter is off"),
    # orderly BROADCASTING: RocketMQ's orderly sendMessageBack ignores the model
    ("orderly broadcasting", True, 0, 0, SUSPEND, 0, ""),
    ("orderly broadcasting", True, 3, 0, DLQ, 0, ""),
    ("orderly broadcasting", True, 9, 0, DLQ, 0, ""),
]


@pytest.mark.parametrize(
    ("mode", "dead_letter", "reconsume_times", "delay_level", "kind", "level", "reason"),
    _MODES,
)
def test_one_decision_for_every_consume_mode(
    mode: str,
    dead_letter: bool,
    reconsume_times: int,
    delay_level: int,
    kind: DestinationKind,
    level: int,
    reason: str,
) -> None:
    dest = route_failed(_mode_policy(mode, dead_letter=dead_letter), reconsume_times, delay_level)
    assert (dest.kind, dest.level, dest.reason) == (kind, level, reason)
    if kind is DLQ:
        assert dest.real_topic == "%DLQ%G"
    if kind in (DELAY, SUSPEND):
        assert dest.real_topic == "%RETRY%G"


def test_orderly_deliveries_are_max_plus_one_then_the_dlq() -> None:
    policy = _mode_policy("orderly", max_reconsume_times=2)
    kinds = [route_failed(policy, n).kind for n in range(4)]
    assert kinds == [SUSPEND, SUSPEND, DLQ, DLQ]
