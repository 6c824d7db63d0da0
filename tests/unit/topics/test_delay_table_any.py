"""Delay tables as RocketMQ's parseDelayLevel takes them (issue 7 item 3)."""

import pytest

from rmqcompat import parking
from rmqcompat import properties as props
from rmqcompat.retry import retry_level
from rmqcompat.topics.delay_levels import DelayLevels, topic_delay_ms

NOW = 1_700_000_000_000
S, M = 1000, 60_000


@pytest.mark.parametrize(
    ("text", "durations"),
    [
        ("1s 1s 5s", (S, S, 5 * S)),
        ("5s 1s", (5 * S, S)),
        ("0s 1s", (0, S)),
        ("10s 30s 30s 30s", (10 * S, 30 * S, 30 * S, 30 * S)),
        ("100ms 1m", (100, M)),  # ms: rmqcompat's extension
    ],
)
def test_any_table_rocketmq_accepts_is_accepted(text: str, durations: tuple[int, ...]) -> None:
    assert DelayLevels.parse(text).durations_ms == durations


def test_levels_with_the_same_delay_share_one_topic() -> None:
    levels = DelayLevels.parse("1s 1s 5s 60s 1m")
    assert levels.topic(1) == levels.topic(2) == "%SCHEDULE%1s"
    assert levels.topic(4) == levels.topic(5) == "%SCHEDULE%1m"
    assert levels.topics() == ["%SCHEDULE%1s", "%SCHEDULE%5s", "%SCHEDULE%1m"]


def test_a_flat_tail_gives_a_constant_retry_interval() -> None:
    levels = DelayLevels.parse("1s 5s 30s 30s 30s")
    assert [levels.delay_ms(retry_level(levels, n)) for n in range(5)] == [30 * S] * 5


@pytest.mark.parametrize(
    ("remaining", "delay"), [(2 * M, M), (M, M), (59 * S, 10 * S), (15 * S, 10 * S), (S, S)]
)
def test_timer_hops_choose_by_delay_not_by_index(remaining: int, delay: int) -> None:
    levels = DelayLevels.parse("1m 10s 1s 0s")
    assert levels.delay_ms(levels.hop_level(remaining)) == delay
    timer = {props.TIMER_DELIVER_MS: str(NOW + remaining)}
    assert levels.delay_ms(parking.first_level(timer, levels, NOW)) == delay


def test_a_timer_shorter_than_every_delay_parks_on_the_shortest_nonzero_one() -> None:
    levels = DelayLevels.parse("0s 1m 10s")
    timer = {props.TIMER_DELIVER_MS: str(NOW + 500)}
    assert parking.first_level(timer, levels, NOW) == 3


def test_a_zero_delay_level_has_no_topic_and_is_delivered_at_once() -> None:
    levels = DelayLevels.parse("0s 1s")
    assert levels.topics() == ["%SCHEDULE%1s"]
    assert parking.first_level({props.DELAY: "1"}, levels, NOW) is None
    out = parking.park(
        b"b", b"k", {"u": "1"}, real_topic="%RETRY%G", level=1, levels=levels,
        namespace="ns", now_ms=NOW,
    )  # fmt: skip
    assert out.topic == "ns.rmq.retry.G"
    assert props.from_headers(out.headers) == {
        "u": "1",
        props.REAL_TOPIC: "%RETRY%G",
        props.REAL_QID: "-1",
    }


@pytest.mark.parametrize(
    ("logical", "delay"),
    [("%SCHEDULE%10s", 10 * S), ("%SCHEDULE%1500ms", 1500), ("%SCHEDULE%x", None), ("T", None)],
)
def test_a_level_topic_names_its_delay(logical: str, delay: int | None) -> None:
    assert topic_delay_ms(logical) == delay
