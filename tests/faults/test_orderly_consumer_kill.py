"""An orderly consumer process SIGKILLed while a partition is suspended, several rounds:
the next process resumes without reordering and nothing is lost.

Run as a script, this file is the consumer child: it appends one line per listener call
("<key> <seq> <reconsume_times> SUCCESS|SUSPEND") to a log and fsyncs it *before*
returning, so the log orders every delivery of every process (one runs at a time).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

KEYS = [f"key-{k}" for k in range(4)]
PER_KEY = 50
SUSPEND_MS = 800
ROUNDS = 5


def child(bootstrap: str, namespace: str, group: str, topic: str, log_path: str, cfg: str) -> None:
    from rmqcompat import (
        ConsumeFromWhere,
        ConsumeOrderlyStatus,
        DefaultMQPushConsumer,
        MessageListenerOrderly,
    )

    log = open(log_path, "a", encoding="utf-8")

    class Listener(MessageListenerOrderly):
        def consume_message(self, msgs, context):
            time.sleep(0.01 * len(msgs))
            (msg,) = msgs
            key, seq = msg.body.decode().split(":")
            suspend = int(seq) % 10 == 5 and msg.reconsume_times == 0
            outcome = "SUSPEND" if suspend else "SUCCESS"
            log.write(f"{key} {seq} {msg.reconsume_times} {outcome}\n")
            log.flush()
            os.fsync(log.fileno())
            if suspend:
                context.suspend_current_queue_time_millis = SUSPEND_MS
                return ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT
            return ConsumeOrderlyStatus.SUCCESS

    consumer = DefaultMQPushConsumer(
        group,
        bootstrap_servers=bootstrap,
        namespace=namespace,
        kafka_config=json.loads(cfg),
        consume_from_where=ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET,
        consume_thread_max=4,
        persist_consumer_offset_interval=0.2,
    )
    consumer.subscribe(topic)
    consumer.register_message_listener(Listener())
    consumer.start()
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    consumer.shutdown()


def _spawn(args: list[str]) -> subprocess.Popen[bytes]:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})  # child waits on it via sigwait
    try:
        return subprocess.Popen(
            [sys.executable, __file__, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})


def _entries(log: Path) -> list[tuple[str, int, int, str]]:
    text = log.read_text() if log.exists() else ""
    out = []
    for line in text.splitlines():
        key, seq, times, outcome = line.split()
        out.append((key, int(seq), int(times), outcome))
    return out


def _suspended_since(log: Path, first: int) -> bool:
    """Some key's latest delivery is a suspension logged at entry ``first`` or later (by
    the running process): its partition waits right now."""
    last: dict[str, tuple[int, str]] = {}
    for n, (key, _, _, outcome) in enumerate(_entries(log)):
        last[key] = (n, outcome)
    return any(n >= first and outcome == "SUSPEND" for n, outcome in last.values())


def _order_violations(entries: list[tuple[str, int, int, str]]) -> list[str]:
    """Deliveries of a message before every earlier message of its key had succeeded."""
    succeeded: dict[str, set[int]] = defaultdict(set)
    bad = []
    for n, (key, seq, _, outcome) in enumerate(entries):
        missing = set(range(seq)) - succeeded[key]
        if missing:
            bad.append(f"line {n + 1}: {key} {seq} before {sorted(missing)[:5]}")
        if outcome == "SUCCESS":
            succeeded[key].add(seq)
    return bad


@pytest.mark.slow
@pytest.mark.faults
def test_orderly_consumer_killed_mid_suspension_resumes_in_order(
    kafka_bootstrap, client_overrides, namespace, unique_name, tmp_path
):
    sys.path.insert(0, str(Path(__file__).parent.parent))
    from consumer_helpers import create_topic
    from waiting import wait_until

    from rmqcompat import DefaultMQProducer, Message

    group, topic = unique_name("g"), unique_name("T")
    create_topic(kafka_bootstrap, topic, namespace, partitions=2)
    with DefaultMQProducer(
        "P", kafka_bootstrap, namespace=namespace, kafka_config=client_overrides
    ) as producer:
        for seq in range(PER_KEY):
            for key in KEYS:
                producer.send_orderly(Message(topic, body=f"{key}:{seq}".encode()), key)
    log = tmp_path / "deliveries.log"
    args = [kafka_bootstrap, namespace, group, topic, str(log), json.dumps(client_overrides)]
    rng = random.Random(11)
    mid_suspension_kills = 0
    for _ in range(ROUNDS):
        proc = _spawn(args)
        seen = len(_entries(log))
        # kill while a partition is suspended: right after a new suspension was logged
        wait_until(lambda seen=seen: _suspended_since(log, seen), timeout=60, what="a suspension")
        time.sleep(rng.uniform(0.05, SUSPEND_MS / 1000 * 0.6))
        mid_suspension_kills += _suspended_since(log, seen)
        proc.kill()
        proc.wait()
    proc = _spawn(args)
    try:
        wait_until(
            lambda: (
                {(k, s) for k, s, _, o in _entries(log) if o == "SUCCESS"}
                >= {(k, s) for k in KEYS for s in range(PER_KEY)}
            ),
            timeout=120,
            what="every message consumed",
        )
    finally:
        proc.terminate()
        proc.wait(30)

    entries = _entries(log)
    successes = [(k, s) for k, s, _, o in entries if o == "SUCCESS"]
    duplicates = len(successes) - len(set(successes))
    print(
        f"\norderly consumer kill: {ROUNDS} kills ({mid_suspension_kills} mid-suspension), "
        f"{len(KEYS) * PER_KEY} messages, {len(entries)} deliveries, "
        f"{duplicates} duplicate successes"
    )
    assert mid_suspension_kills == ROUNDS
    assert _order_violations(entries) == []
    assert set(successes) == {(k, s) for k in KEYS for s in range(PER_KEY)}


if __name__ == "__main__":
    child(*sys.argv[1:])
