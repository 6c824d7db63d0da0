"""A SimpleConsumer process SIGKILLed while it holds unacked messages: nothing is lost.

Run as a script, this file is the consumer child: it receives every message with a long
invisible time, acks the first ``ACKED`` of them, writes each id it received and acked
to a log (fsynced), then waits to be killed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

MESSAGES = 20
ACKED = 5
GIVE_UP_S = 60.0


def child(bootstrap: str, namespace: str, group: str, log_path: str, cfg: str) -> None:
    from v5_helpers import receive_until

    from rmqcompat.v5 import ClientConfiguration, FilterExpression, SimpleConsumer

    config = ClientConfiguration(bootstrap, None, namespace, kafka_config=json.loads(cfg))
    consumer = SimpleConsumer(config, group, {"Jobs": FilterExpression()}, await_duration=1)
    consumer.startup()
    log = open(log_path, "a", encoding="utf-8")
    for i, msg in enumerate(receive_until(consumer, MESSAGES, invisible_s=600, max_num=32)):
        if i < ACKED:
            consumer.ack(msg)
            log.write(f"acked {msg.message_id}\n")
        else:
            log.write(f"held {msg.message_id}\n")
    log.flush()
    os.fsync(log.fileno())
    signal.sigwait({signal.SIGTERM})


@pytest.mark.slow
@pytest.mark.faults
def test_messages_held_by_a_killed_consumer_come_back_to_the_group(
    kafka_bootstrap, namespace, client_overrides, unique_name, tmp_path
):
    sys.path.insert(0, str(Path(__file__).parent.parent))
    from v5_helpers import config, create_topic, message

    from rmqcompat.v5 import FilterExpression, Producer, SimpleConsumer

    group = unique_name("g")
    create_topic(kafka_bootstrap, namespace, "Jobs", partitions=2)
    cfg = config(kafka_bootstrap, namespace, client_overrides)
    producer = Producer(cfg)
    producer.startup()
    ids = {producer.send(message("Jobs", f"{i}".encode())).message_id for i in range(MESSAGES)}
    producer.shutdown()

    log = tmp_path / "child.log"
    args = [kafka_bootstrap, namespace, group, str(log), json.dumps(client_overrides)]
    proc = subprocess.Popen(
        [sys.executable, __file__, *args],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)},
    )
    try:
        deadline = time.monotonic() + GIVE_UP_S
        while len(_lines(log)) < MESSAGES:
            assert proc.poll() is None and time.monotonic() < deadline, _lines(log)
            time.sleep(0.2)
    finally:
        proc.kill()
        proc.wait()
    held = {line.split()[1] for line in _lines(log) if line.startswith("held")}
    assert len(held) == MESSAGES - ACKED and held <= ids

    consumer = SimpleConsumer(cfg, group, {"Jobs": FilterExpression()}, await_duration=1)
    consumer.startup()
    try:
        back: dict[str, int] = {}
        deadline = time.monotonic() + GIVE_UP_S
        while not held <= back.keys():
            assert time.monotonic() < deadline, f"{len(held - back.keys())} never came back"
            for msg in consumer.receive(32, 60):
                back[msg.message_id or ""] = msg.delivery_attempt or 0
                consumer.ack(msg)
    finally:
        consumer.shutdown()
    # the killed process's attempt was never settled, so it is not counted
    assert {back[i] for i in held} == {1}


def _lines(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


if __name__ == "__main__":
    child(*sys.argv[1:])
