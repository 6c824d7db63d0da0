"""RocketMQ's delay-level table and the retry ladder (SEMANTICS section 5)."""

from __future__ import annotations

import re

import pytest

from rmqcompat.errors import ConfigError
from rmqcompat.retry import retry_level
from rmqcompat.topics.delay_levels import DelayLevels, parse_duration_ms

S, M, H = 1000, 60_000, 3_600_000
DEFAULT_TABLE_MS = (
    1 * S, 5 * S, 10 * S, 30 * S,
    1 * M, 2 * M, 3 * M, 4 * M, 5 * M, 6 * M, 7 * M, 8 * M, 9 * M, 10 * M, 20 * M, 30 * M,
    1 * H, 2 * H,
)  # fmt: skip
#: SEMANTICS section 5: retry n waits level n + 2.
RETRY_WAITS_MS = (
    10 * S, 30 * S, 1 * M, 2 * M, 3 * M, 4 * M, 5 * M, 6 * M,
    7 * M, 8 * M, 9 * M, 10 * M, 20 * M, 30 * M, 1 * H, 2 * H,
)  # fmt: skip

DEFAULT = DelayLevels.parse()


def test_default_table_has_rocketmqs_18_levels() -> None:
    assert DEFAULT.max_level == 18
    assert [DEFAULT.delay_ms(level) for level in range(1, 19)] == list(DEFAULT_TABLE_MS)


def test_parse_of_the_documented_text_equals_the_default() -> None:
    text = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"
    assert DelayLevels.parse(text) == DEFAULT


@pytest.mark.parametrize(
    ("token", "millis"),
    [("100ms", 100), ("1s", 1000), ("2m", 120_000), ("3h", 10_800_000), ("1d", 86_400_000)],
)
def test_units(token: str, millis: int) -> None:
    assert parse_duration_ms(token) == millis


def test_short_test_tables_parse() -> None:
    assert DelayLevels.parse("100ms 200ms 1s").durations_ms == (100, 200, 1000)
    assert DelayLevels.parse("  1s\t2s\n").durations_ms == (1000, 2000)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "at least one"),
        ("   ", "at least one"),
        ("1x", "<number><ms|s|m|h|d>"),
        ("1s junk", "<number><ms|s|m|h|d>"),
        ("s", "<number><ms|s|m|h|d>"),
        ("1.5s", "<number><ms|s|m|h|d>"),
        ("-1s", "<number><ms|s|m|h|d>"),
        ("1S", "<number><ms|s|m|h|d>"),
    ],
)
def test_bad_tables_raise_config_error(text: str, why: str) -> None:
    with pytest.raises(ConfigError, match=why.replace("|", r"\|")):
        DelayLevels.parse(text)


@pytest.mark.parametrize("retry", range(1, 17))
def test_retry_n_waits_level_n_plus_2(retry: int) -> None:
    reconsume_times = retry - 1  # the first retry follows the first failure
    level = retry_level(DEFAULT, reconsume_times)
    assert level == retry + 2
    assert DEFAULT.delay_ms(level) == RETRY_WAITS_MS[retry - 1]


@pytest.mark.parametrize("reconsume_times", [16, 17, 100, 999])
def test_retries_beyond_16_wait_2h(reconsume_times: int) -> None:
    assert DEFAULT.delay_ms(retry_level(DEFAULT, reconsume_times)) == 2 * H


def test_retry_level_caps_at_a_short_table() -> None:
    short = DelayLevels.parse("1s 2s 3s")
    assert [retry_level(short, n) for n in range(4)] == [3, 3, 3, 3]


@pytest.mark.parametrize(
    ("remaining_ms", "level"),
    [
        (999, None),
        (1000, 1),
        (4999, 1),
        (5000, 2),
        (59_999, 4),
        (60_000, 5),
        (2 * H - 1, 17),
        (2 * H, 18),
        (100 * H, 18),
        (0, None),
        (-5, None),
    ],
)
def test_hop_level_is_the_largest_level_that_fits(remaining_ms: int, level: int | None) -> None:
    assert DEFAULT.hop_level(remaining_ms) == level


@pytest.mark.parametrize("level", [0, -1, 19])
def test_levels_outside_the_table_raise(level: int) -> None:
    with pytest.raises(ConfigError, match=re.escape("1..18")):
        DEFAULT.delay_ms(level)


def test_a_level_of_delay_0_has_no_topic_and_levels_outside_the_table_none_either() -> None:
    levels = DelayLevels.parse("0s 1s 1s")
    assert levels.topic(2) == levels.topic(3) == "%SCHEDULE%1s"
    for _ in range(2):  # each table names its topics once; the refusals stay
        with pytest.raises(ConfigError, match="level 1 has delay 0"):
            levels.topic(1)
        with pytest.raises(ConfigError, match=re.escape("1..3")):
            levels.topic(4)


def test_each_level_has_its_own_topic() -> None:
    topics = DEFAULT.topics()
    assert len(set(topics)) == 18
    assert DEFAULT.topic(3) == "%SCHEDULE%10s"
    assert DEFAULT.topic(18) == "%SCHEDULE%2h"
    assert DelayLevels.parse("100ms 1500ms 60s").topics() == [
        "%SCHEDULE%100ms",
        "%SCHEDULE%1500ms",
        "%SCHEDULE%1m",
    ]
