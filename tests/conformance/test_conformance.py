"""Each scenario on Apache RocketMQ 5.5.0 (4.x Java client) and on rmqcompat over Apache
Kafka: the histories must match field by field, but for the differences the scenario
names (docs/conformance.md lists them with their reasons).

A scenario with deviations still to fix is a strict xfail that covers only
:class:`DeviationsRemain`: the harness's own failures, an unexplained difference and a
stale expectation still fail it.
"""

from __future__ import annotations

import pytest
from history import compare, unused_expectations
from scenarios import ALL, BY_NAME

pytestmark = [pytest.mark.conformance, pytest.mark.slow]


class DeviationsRemain(Exception):
    """rmqcompat still differs from RocketMQ where the scenario names a deviation."""


def _param(scenario):
    reason = "; ".join(d.reason for d in scenario.deviations)
    marks = (
        [pytest.mark.xfail(strict=True, raises=DeviationsRemain, reason=reason)]
        if scenario.deviations
        else []
    )
    return pytest.param(scenario.name, marks=marks, id=scenario.name)


@pytest.mark.parametrize("name", [_param(s) for s in ALL])
def test_rmqcompat_behaves_as_rocketmq(name, runs, client_overrides):
    scenario = BY_NAME[name]
    rocketmq, ours = runs.histories(name, client_overrides)
    differences = compare(rocketmq, ours, scenario)
    unexplained = [str(d) for d in differences if d.expected is None and d.deviation is None]
    assert not unexplained, "unexplained differences:\n" + "\n".join(unexplained)
    stale = unused_expectations(differences, scenario)
    assert not stale, f"expected differences that did not occur: {stale}"
    deviations = [str(d) for d in differences if d.expected is None]
    if deviations:
        raise DeviationsRemain("deviations still to fix:\n" + "\n".join(deviations))
