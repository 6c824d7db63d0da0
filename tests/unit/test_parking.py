"""Parking on delay-level topics and releasing when due (SEMANTICS section 5), fixed clock."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rmqcompat import properties as props
from rmqcompat.errors import ConfigError, InvalidNameError, MalformedHeaderError
from rmqcompat.parking import due_time, first_level, park, release
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.wire import OutgoingRecord

LEVELS = DelayLevels.parse()
NOW = 1_700_000_000_000
S, H = 1000, 3_600_000


def _park(
    properties: dict[str, str], level: int, now: int = NOW, namespace: str = "ns"
) -> OutgoingRecord:
    return park(
        b"body",
        b"key",
        properties,
        real_topic="%RETRY%G",
        level=level,
        levels=LEVELS,
        namespace=namespace,
        now_ms=now,
    )


@pytest.mark.parametrize(("level", "delay_ms"), [(1, 1 * S), (3, 10 * S), (18, 2 * H)])
def test_park_sets_due_time_real_topic_and_level(level: int, delay_ms: int) -> None:
    record = _park({"user": "u", props.UNIQ_KEY: "ID"}, level)
    decoded = props.from_headers(record.headers)
    assert due_time(decoded) == NOW + delay_ms
    assert decoded[props.REAL_TOPIC] == "%RETRY%G"
    assert decoded[props.DELAY] == str(level)
    assert decoded["user"] == "u" and decoded[props.UNIQ_KEY] == "ID"
    assert (record.value, record.key) == (b"body", b"key")


def test_park_writes_to_the_level_topic_of_the_namespace() -> None:
    assert _park({}, 3).topic == "ns.rmq.delay.10s"
    assert _park({}, 18, namespace="").topic == "rmq.delay.2h"


def test_park_replaces_stale_parking_properties() -> None:
    stale = {props.DUE_TIME: "1", props.DELAY: "9", props.REAL_TOPIC: "X", props.REAL_QID: "4"}
    decoded = props.from_headers(_park(stale, 2).headers)
    assert decoded[props.DUE_TIME] == str(NOW + 5 * S)
    assert decoded[props.DELAY] == "2"
    assert decoded[props.REAL_TOPIC] == "%RETRY%G"
    assert decoded[props.REAL_QID] == "-1"


def test_park_refuses_bad_level_or_topic_before_building_a_record() -> None:
    with pytest.raises(ConfigError):
        _park({}, 19)
    with pytest.raises(InvalidNameError):
        park(b"", None, {}, real_topic="a.b", level=1, levels=LEVELS, namespace="", now_ms=NOW)


# --- first level of scheduled and timer messages --------------------------------------------


@pytest.mark.parametrize(
    ("properties", "level"),
    [
        ({}, None),
        ({props.DELAY: "0"}, None),
        ({props.DELAY: "3"}, 3),
        ({props.DELAY: "18"}, 18),
        ({props.DELAY: "40"}, 18),
        ({props.TIMER_DELIVER_MS: str(NOW - 1)}, None),
        ({props.TIMER_DELIVER_MS: str(NOW)}, None),
        ({props.TIMER_DELIVER_MS: str(NOW + 1)}, 1),
        ({props.TIMER_DELIVER_MS: str(NOW + 10 * S)}, 3),
        ({props.TIMER_DELIVER_MS: str(NOW + 10 * S + 1)}, 3),
        ({props.TIMER_DELIVER_MS: str(NOW + 100 * H)}, 18),
    ],
)
def test_first_level(properties: dict[str, str], level: int | None) -> None:
    assert first_level(properties, LEVELS, NOW) == level


@pytest.mark.parametrize("bad", [{props.DELAY: "x"}, {props.TIMER_DELIVER_MS: "soon"}])
def test_first_level_rejects_malformed_numbers(bad: dict[str, str]) -> None:
    with pytest.raises(MalformedHeaderError):
        first_level(bad, LEVELS, NOW)


def test_timer_far_away_parks_on_largest_fitting_level() -> None:
    timer = {props.TIMER_DELIVER_MS: str(NOW + 90 * 60 * S)}  # 1h30m away
    level = first_level(timer, LEVELS, NOW)
    assert level == 17  # 1h
    assert due_time(props.from_headers(_park(timer, level).headers)) == NOW + H


def test_timer_near_is_due_at_its_delivery_time() -> None:
    timer = {props.TIMER_DELIVER_MS: str(NOW + 400)}  # shorter than level 1 (1s)
    level = first_level(timer, LEVELS, NOW)
    assert level == 1
    assert due_time(props.from_headers(_park(timer, level).headers)) == NOW + 400


# --- release --------------------------------------------------------------------------------


def test_release_strips_parking_properties() -> None:
    decoded = props.from_headers(_park({"user": "u", props.TAGS: "A"}, 3).headers)
    released = release(decoded, LEVELS, NOW + 10 * S)
    assert released.real_topic == "%RETRY%G"
    # Apache RocketMQ 5.5.0 delivers it with REAL_TOPIC, REAL_QID and the level waited on.
    kept = {props.REAL_TOPIC: "%RETRY%G", props.REAL_QID: "-1", props.DELAY: "3"}
    assert released.properties == {"user": "u", props.TAGS: "A", **kept}
    assert released.next_level is None


def test_release_of_a_timer_not_yet_due_hops_again() -> None:
    timer = {props.TIMER_DELIVER_MS: str(NOW + 3 * H)}
    decoded = props.from_headers(_park(timer, 18).headers)
    released = release(decoded, LEVELS, NOW + 2 * H)
    assert released.next_level == 17
    parked = {props.REAL_TOPIC: "%RETRY%G", props.REAL_QID: "-1", props.DELAY: "18"}
    assert released.properties == {**timer, **parked, props.TIMER_ENQUEUE_MS: str(NOW)}


def test_a_due_timer_is_released_with_rocketmq_timer_properties_not_its_hop_level() -> None:
    deliver = str(NOW + 5 * S)
    decoded = props.from_headers(_park({props.TIMER_DELIVER_MS: deliver}, 2).headers)
    released = release(decoded, LEVELS, NOW + 5 * S + 7)
    assert released.next_level is None
    assert props.DELAY not in released.properties
    timer = {k: v for k, v in released.properties.items() if k.startswith("TIMER_")}
    assert timer == {
        props.TIMER_DELIVER_MS: deliver,
        props.TIMER_OUT_MS: deliver,
        props.TIMER_ENQUEUE_MS: str(NOW),
        props.TIMER_DEQUEUE_MS: str(NOW + 5 * S + 7),
    }


@pytest.mark.parametrize(
    ("properties", "error"),
    [
        ({}, MalformedHeaderError),
        ({props.REAL_TOPIC: ""}, MalformedHeaderError),
        ({props.REAL_TOPIC: "a.b"}, InvalidNameError),
        ({props.REAL_TOPIC: "T", props.TIMER_DELIVER_MS: "x"}, MalformedHeaderError),
    ],
)
def test_release_rejects_broken_records(properties: dict[str, str], error: type) -> None:
    with pytest.raises(error):
        release(properties, LEVELS, NOW)


def test_due_time_missing_or_malformed_raises() -> None:
    with pytest.raises(MalformedHeaderError):
        due_time({})
    with pytest.raises(MalformedHeaderError):
        due_time({props.DUE_TIME: "later"})


@given(offset_ms=st.integers(min_value=1, max_value=10 * 24 * H))
def test_timer_hops_arrive_exactly_at_the_delivery_time(offset_ms: int) -> None:
    """Park, wait until due, release, park again ... ends at the delivery time, never later."""
    deliver = NOW + offset_ms
    properties = {props.TIMER_DELIVER_MS: str(deliver)}
    now, level = NOW, first_level(properties, LEVELS, NOW)
    while level is not None:
        now = due_time(props.from_headers(_park(properties, level, now).headers))
        assert now <= deliver
        released = release(props.from_headers(_park(properties, level, now).headers), LEVELS, now)
        properties, level = released.properties, released.next_level
    assert now == deliver
    assert properties[props.TIMER_OUT_MS] == str(deliver)
