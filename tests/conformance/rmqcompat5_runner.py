"""Runs a 5.x scenario on rmqcompat over the session's Kafka broker: ``driver5.py`` with
``rmqcompat.v5`` (the same application code as on RocketMQ), a delay forwarder for the
retries and delivery times, and the scenario's topic and ``%DLQ%<group>`` created up front
as ``Setup5.java`` creates them on RocketMQ; the raw observations."""

from __future__ import annotations

from typing import Any

import driver5
from consumer_helpers import create_topic
from reference_broker import V5_DELAY_LEVELS
from rmqcompat_observer import KafkaSide
from rmqcompat_runner import forwarder
from scenario import Scenario

from rmqcompat import v5


def run(scenario: Scenario, side: KafkaSide, topic: str, group: str) -> dict[str, Any]:
    """Run ``scenario`` on rmqcompat; the raw observations."""
    for name in (topic, f"%DLQ%{group}"):
        create_topic(side.bootstrap, name, side.namespace)
    config = v5.ClientConfiguration(
        side.bootstrap,
        namespace=side.namespace,
        kafka_config=side.overrides,
        message_delay_level=V5_DELAY_LEVELS,
    )
    spec = scenario.driver5_json(topic, group)
    with forwarder(side, V5_DELAY_LEVELS):
        return driver5.drive(v5, config, spec, {"max_attempts": scenario.max_attempts})
