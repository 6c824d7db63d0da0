"""A consumer process SIGKILLed mid-batch, 10 rounds: nothing lost, duplicates counted.

Run as a script, this file is the consumer child: it appends one line per listener
outcome ("<msg_id> <reconsume_times> OK|LATER") to a log and fsyncs it *before*
returning, so a success the broker may not know about yet is still on record.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

SHORT_LEVELS = "100ms 200ms 300ms 400ms 500ms 600ms 700ms 800ms 900ms 1s"
ROUNDS = 10
MESSAGES = 1000


def child(bootstrap: str, namespace: str, group: str, topic: str, log_path: str, cfg: str) -> None:
    from rmqcompat.consumer.listener import ConsumeConcurrentlyStatus as S
    from rmqcompat.consumer.listener import ConsumeFromWhere
    from rmqcompat.consumer.push_consumer import DefaultMQPushConsumer

    log = open(log_path, "a", encoding="utf-8")

    def listener(msgs, ctx):
        time.sleep(0.03 * len(msgs))  # keep batches in flight long enough to be killed mid-batch
        fails = [
            m.body == b"always" or (m.body == b"twice" and m.reconsume_times < 2) for m in msgs
        ]
        for i, failed in enumerate(fails):
            if failed:
                ctx.fail(i)  # per-message failure: the rest of the batch succeeds
        out = "".join(
            f"{m.msg_id} {m.reconsume_times} {'LATER' if f else 'CONSUME_SUCCESS'}\n"
            for m, f in zip(msgs, fails, strict=True)
        )
        log.write(out)
        log.flush()
        os.fsync(log.fileno())
        status = S.RECONSUME_LATER if any(fails) else S.CONSUME_SUCCESS
        return status

    consumer = DefaultMQPushConsumer(
        group,
        bootstrap_servers=bootstrap,
        namespace=namespace,
        message_delay_level=SHORT_LEVELS,
        kafka_config=json.loads(cfg),
        consume_from_where=ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET,
        consume_message_batch_max_size=4,
        max_reconsume_times=2,
        consume_thread_max=4,
        persist_consumer_offset_interval=0.2,
    )
    consumer.subscribe(topic)
    consumer.register_message_listener(listener)
    consumer.start()
    signal.sigwait({signal.SIGTERM, signal.SIGINT})


def _spawn(args: list[str]) -> subprocess.Popen[bytes]:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})  # child waits on it via sigwait
    try:
        return subprocess.Popen(
            [sys.executable, __file__, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})


@pytest.mark.slow
@pytest.mark.faults
def test_consumer_sigkilled_mid_batch_loses_nothing(
    kafka_bootstrap, client_overrides, namespace, unique_name, tmp_path
):
    sys.path.insert(0, str(Path(__file__).parent.parent))
    from consumer_helpers import create_topic, produce, read_all

    from rmqcompat.forwarder import DelayForwarder
    from rmqcompat.topics.naming import dlq_topic

    group, topic = unique_name("g"), unique_name("T")
    create_topic(kafka_bootstrap, topic, namespace, partitions=2)
    bodies = [
        b"always" if i % 50 == 0 else b"twice" if i % 10 == 0 else b"ok" for i in range(MESSAGES)
    ]
    ids = produce(kafka_bootstrap, topic, namespace, [{"body": b} for b in bodies[::2]], 0)
    ids += produce(kafka_bootstrap, topic, namespace, [{"body": b} for b in bodies[1::2]], 1)
    body_of = dict(zip(ids, bodies[::2] + bodies[1::2], strict=True))
    log = tmp_path / "deliveries.log"
    args = [kafka_bootstrap, namespace, group, topic, str(log), json.dumps(client_overrides)]
    forwarder = DelayForwarder(
        bootstrap_servers=kafka_bootstrap,
        namespace=namespace,
        message_delay_level=SHORT_LEVELS,
        kafka_config=client_overrides,
    )
    forwarder.start()
    rng = random.Random(7)
    try:
        for _ in range(ROUNDS):
            proc = _spawn(args)
            time.sleep(rng.uniform(2.0, 3.5))  # joins (~1 s) and is busy consuming
            proc.kill()
            proc.wait()
        proc = _spawn(args)
        dead: set[str] = set()
        deadline = time.monotonic() + 120
        expected_dead = {i for i, b in body_of.items() if b == b"always"}
        while time.monotonic() < deadline:
            done = _successes(log)
            dead = {
                h["UNIQ_KEY"]
                for h, _ in read_all(kafka_bootstrap, dlq_topic(group), namespace, 0.5)
            }
            if set(done) | dead >= set(ids) and dead >= expected_dead:
                break
        proc.terminate()
        proc.wait(30)
    finally:
        forwarder.shutdown()
    done = _successes(log)
    lost = set(ids) - set(done) - dead
    duplicates = sum(n - 1 for n in done.values() if n > 1)
    print(
        f"\nconsumer kill: {ROUNDS} rounds, {len(ids)} messages, {len(done)} succeeded, "
        f"{len(dead)} dead-lettered, {duplicates} duplicate successes, {len(lost)} lost"
    )
    assert not lost
    assert dead == {i for i, b in body_of.items() if b == b"always"}
    assert all(body_of[i] != b"always" for i in done)


def _successes(log: Path) -> Counter[str]:
    text = log.read_text() if log.exists() else ""
    return Counter(
        line.split()[0] for line in text.splitlines() if line.endswith(" CONSUME_SUCCESS")
    )


if __name__ == "__main__":
    child(*sys.argv[1:])
