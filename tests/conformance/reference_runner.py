"""Runs a scenario on Apache RocketMQ: the Java driver in its own JVM, against the
session's name server and broker; the raw observations it prints."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from reference_broker import ReferenceBroker
from reference_runtime import compiled_driver
from scenario import TIMEOUT_MS, Scenario

from rmqcompat.devbroker.apache_kafka import run_tool

_JVM = ("-Xms64m", "-Xmx256m", "-XX:TieredStopAtLevel=1")
#: The Java client rebalances every 20 s by default; a group must get its queue at once.
_CLIENT = ("-Drocketmq.client.rebalance.waitInterval=1000",)


def run(broker: ReferenceBroker, scenario: Scenario, topic: str, group: str) -> dict[str, Any]:
    """Run ``scenario`` through ``Driver.java``; raise with its output if it fails."""
    classes = compiled_driver(broker.jars)
    with tempfile.TemporaryDirectory(prefix="scenario-") as work:
        spec = Path(work) / "scenario.json"
        spec.write_text(json.dumps(scenario.driver_json(topic, group)), encoding="utf-8")
        argv = [broker.java, *_JVM, *_CLIENT, *broker.system_properties()]
        argv += ["-cp", f"{broker.jars / '*'}:{classes}", "Driver", broker.namesrv, str(spec)]
        result = run_tool(argv, TIMEOUT_MS / 1000 + 60)
    lines = result.stdout.strip().splitlines()
    if result.returncode != 0 or not lines:
        raise AssertionError(
            f"the RocketMQ driver failed (exit {result.returncode}) on {scenario.name}: "
            f"{result.stderr[-3000:]}"
        )
    raw: dict[str, Any] = json.loads(lines[-1])
    return raw
