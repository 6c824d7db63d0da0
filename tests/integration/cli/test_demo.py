"""The demo of README command 1 ends exactly as it promises, on a real broker."""

from __future__ import annotations

import pytest

from rmqcompat.cli.demo import FAILURES, MAX_RECONSUME_TIMES, ORDERS, run_demo, summary


@pytest.mark.slow
def test_demo_retries_on_the_ladder_and_dead_letters_the_always_failing_order(
    kafka_bootstrap: str,
) -> None:
    lines: list[str] = []
    outcome = run_demo(kafka_bootstrap, say=lines.append)

    assert outcome.ok(), "\n".join(lines + summary(outcome))
    always_failing = [order for order, fails in FAILURES.items() if fails is None]
    assert set(outcome.dead_letters) == set(always_failing)
    for order in always_failing:
        dead = outcome.dead_letters[order]
        assert dead.reconsume_times == MAX_RECONSUME_TIMES + 1
        assert dead.get_property("RETRY_TOPIC") == "DemoOrders"
    assert outcome.succeeded == set(ORDERS) - set(always_failing)
    assert any("retry on delay level 4" in line for line in lines)
