"""Runs a 5.x scenario on Apache RocketMQ: ``Setup5.java`` creates the topic (of the
scenario's message type), ``%DLQ%<group>`` and the groups (the scenario's with its retry
policy and FIFO flag, and the dead-letter reader's), then ``driver5.py`` runs it through
the official ``rocketmq-python-client`` against the proxy's gRPC port, in the reference
virtual environment; the raw observations it prints."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from reference_broker import V5_DELAY_LEVELS, ReferenceBroker
from reference_runtime import compiled_driver, reference_python
from scenario import TIMEOUT_MS, Scenario

from rmqcompat.devbroker.apache_kafka import run_tool
from rmqcompat.topics.delay_levels import DelayLevels

_DRIVER = Path(__file__).with_name("driver5.py")
_SETUP_TIMEOUT_S = 120.0
_JVM = ("-Xms32m", "-Xmx128m", "-XX:TieredStopAtLevel=1")


def run(broker: ReferenceBroker, scenario: Scenario, topic: str, group: str) -> dict[str, Any]:
    """Run ``scenario`` through ``driver5.py``; raise with its output if a step fails."""
    spec = scenario.driver5_json(topic, group)
    with tempfile.TemporaryDirectory(prefix="scenario5-") as work:
        setup = Path(work) / "setup.json"
        setup.write_text(json.dumps(setup_json(scenario, spec)), encoding="utf-8")
        classes = compiled_driver(broker.jars)
        argv = [broker.java, *_JVM, *broker.system_properties()]
        argv += ["-cp", f"{broker.jars / '*'}:{classes}", "Setup5", broker.namesrv, str(setup)]
        _check(run_tool(argv, _SETUP_TIMEOUT_S), "Setup5.java", scenario)
        path = Path(work) / "scenario.json"
        path.write_text(json.dumps(spec), encoding="utf-8")
        argv = [str(reference_python(broker.jars)), str(_DRIVER), broker.grpc, str(path)]
        result = run_tool(argv, TIMEOUT_MS / 1000 + 60)
    lines = _check(result, "driver5.py", scenario)
    raw: dict[str, Any] = json.loads(lines[-1])
    return raw


def setup_json(scenario: Scenario, spec: dict[str, Any]) -> dict[str, Any]:
    """What ``Setup5.java`` creates for ``scenario``: the group's retry policy is the
    conformance delay table (attempt n waits level n, as rmqcompat's backoff does) and
    its maximum the scenario's attempts."""
    delayed = any(send.deliver_after_ms for send in scenario.messages)
    return {
        "topic": spec["topic"],
        "message_type": "FIFO" if scenario.fifo else "DELAY" if delayed else "NORMAL",
        "group": spec["group"],
        "readers": [spec["dlq_group"]],
        "retry_max_times": scenario.max_attempts - 1,
        "next_ms": list(DelayLevels.parse(V5_DELAY_LEVELS).durations_ms),
        "fifo": scenario.fifo,
    }


def _check(result: Any, what: str, scenario: Scenario) -> list[str]:
    lines: list[str] = result.stdout.strip().splitlines()
    if result.returncode != 0:
        raise AssertionError(
            f"{what} failed (exit {result.returncode}) on {scenario.name}: "
            f"{result.stdout[-1500:]}{result.stderr[-3000:]}"
        )
    return lines
