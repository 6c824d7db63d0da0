"""Each scenario on Apache RocketMQ 5.5.0 (4.x Java client) and on rmqcompat over Apache
Kafka: the histories must match field by field, but for the differences the scenario
names (docs/conformance.md lists them with their reasons).

A scenario with deviations still to fix is a strict xfail. The harness's own failures, an
unexplained difference and a stale expectation are checked in the ``differences``
fixture, so they are errors even then: an xfail covers only the deviations it names.
"""

from __future__ import annotations

import pytest
from history import Difference, compare, unused_expectations
from scenarios import ALL, BY_NAME

pytestmark = [pytest.mark.conformance, pytest.mark.slow]


def _param(scenario):
    reason = "; ".join(d.reason for d in scenario.deviations)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if scenario.deviations else []
    return pytest.param(scenario.name, marks=marks, id=scenario.name)


@pytest.fixture
def differences(name, runs, client_overrides) -> list[Difference]:
    scenario = BY_NAME[name]
    rocketmq, ours = runs.histories(name, client_overrides)
    found = compare(rocketmq, ours, scenario)
    unexplained = [str(d) for d in found if d.expected is None and d.deviation is None]
    if unexplained:
        pytest.fail("unexplained differences:\n" + "\n".join(unexplained))
    if stale := unused_expectations(found, scenario):
        pytest.fail(f"expected differences that did not occur: {stale}")
    return found


@pytest.mark.parametrize("name", [_param(s) for s in ALL])
def test_rmqcompat_behaves_as_rocketmq(name, differences):
    deviations = [str(d) for d in differences if d.expected is None]
    assert not deviations, "deviations still to fix:\n" + "\n".join(deviations)
