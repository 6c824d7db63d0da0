"""Dead letters and their replay leave DEAD_LETTER and REPLAY trace events (what the
audit's ``dead_lettered`` and ``replayed`` figures count)."""

from __future__ import annotations

import time

import pytest
from click.testing import CliRunner
from confluent_kafka import Consumer
from consumer_fixtures import consumer_env  # noqa: F401
from consumer_helpers import LATER, SHORT_LEVELS, Recorder

from rmqcompat.cli.main import main
from rmqcompat.config import ClientConfig
from rmqcompat.topics.naming import TRACE_TOPIC, dlq_topic, to_kafka_topic
from rmqcompat.trace import decode


def _trace_events(bootstrap: str, namespace: str, wanted: int) -> list[dict[str, object]]:
    client = ClientConfig(bootstrap, namespace)
    consumer = Consumer(
        client.librdkafka(
            "consumer", **{"group.id": "trace-check", "auto.offset.reset": "earliest"}
        )
    )
    consumer.subscribe([to_kafka_topic(TRACE_TOPIC, namespace)])
    events: list[dict[str, object]] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and sum(e["event"] == "REPLAY" for e in events) < wanted:
        record = consumer.poll(0.5)
        if record is not None and record.error() is None:
            events.append(decode(record.value() or b""))
    consumer.close()
    return events


@pytest.mark.slow
def test_dead_letters_and_replays_are_traced(env, start_forwarder) -> None:
    start_forwarder(SHORT_LEVELS)
    # a plain Kafka producer: no PUBLISH events
    ids = env.produce([{"body": f"body-{i}".encode(), "tags": "TA"} for i in range(2)])
    with env.consumer(Recorder(lambda msgs, ctx: LATER), max_reconsume_times=1):
        assert len(env.read(dlq_topic(env.group), 2, timeout=60)) == 2
    base = ["--bootstrap-servers", env.bootstrap, "--namespace", env.ns]
    result = CliRunner().invoke(main, [*base, "dlq", "replay", "--group", env.group, "--yes"])
    assert result.exit_code == 0, result.output
    events = _trace_events(env.bootstrap, env.ns, 2)
    kinds = {(e["event"], e["msg_id"]) for e in events}
    for msg_id in ids:
        assert {("CONSUME", msg_id), ("SEND_BACK", msg_id), ("FORWARD", msg_id)} <= kinds
        assert {("DEAD_LETTER", msg_id), ("REPLAY", msg_id)} <= kinds
    (replay, *_) = [e for e in events if e["event"] == "REPLAY"]
    assert replay["group"] == env.group and replay["topic"] == env.topic
