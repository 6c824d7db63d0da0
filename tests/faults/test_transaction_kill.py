"""A transactional producer SIGKILLed between its half message and its commit.

Run as a script, this file is the producer child. ``during-local`` dies while the local
transaction runs (half stored, nothing decided); ``during-commit`` dies inside the Kafka
transaction of its COMMIT, after the committed message was produced and before the
transaction commits. Either way a restarted producer of the same group (same instance
name: it fences the dead one and aborts its open transaction) checks the half and
delivers the message exactly once; read_committed readers never see the aborted copy.
On the session broker and on the three-node cluster.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))
from consumer_helpers import create_topic
from transaction_helpers import COMMIT, Listener, read_ids, started, wait_for

TANSU_ABORTS_VISIBLE = (
    "broker bug: Tansu 0.6.0 hands records of aborted transactions (fenced by a new "
    "producer or aborted explicitly) to read_committed consumers, so the killed COMMIT "
    "becomes visible instead of being aborted and checked"
)


def child(bootstrap: str, namespace: str, group: str, topic: str, mode: str, cfg: str) -> None:
    from rmqcompat.message import Message
    from rmqcompat.transaction import ender

    def announce(line: str) -> None:
        print(line, flush=True)

    def hang_before_commit(self: Any, records: Any) -> None:
        producer = self._producer or self._new_producer()
        self._producer = producer
        producer.begin_transaction()
        for record in records:
            producer.produce(
                record.topic,
                record.value,
                key=record.key,
                headers=record.headers,
                partition=-1 if record.partition is None else record.partition,
            )
        producer.flush(10)  # the records are stored, the transaction is still open
        announce("IN_TRANSACTION")
        time.sleep(3600)

    def local(msg: Any) -> Any:
        announce(f"HALF {msg.msg_id}")
        if mode == "during-local":
            time.sleep(3600)
        return COMMIT

    if mode == "during-commit":
        ender.TransactionEnder._in_transaction = hang_before_commit  # type: ignore[method-assign]
    gen = started(bootstrap, namespace, group, Listener(local), json.loads(cfg), instance_name="i1")
    producer = next(gen)
    producer.send_message_in_transaction(Message(topic, b"payload"))
    time.sleep(3600)


def _run_child(args: list[str]) -> tuple[subprocess.Popen[str], str, bool]:
    proc = subprocess.Popen(
        [sys.executable, __file__, *args],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)},
    )
    assert proc.stdout is not None
    msg_id, in_tx = "", False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline().strip()
        if line.startswith("HALF "):
            msg_id = line.split()[1]
            if args[-2] == "during-local":
                break
        if line == "IN_TRANSACTION":
            in_tx = True
            break
    return proc, msg_id, in_tx


@pytest.fixture(
    params=["one broker", pytest.param("three-node cluster", marks=pytest.mark.three_node_cluster)]
)
def where(request: pytest.FixtureRequest) -> str:
    """The session broker, or the three-node cluster (its transaction topics and Kafka's
    transaction state replicated three times, two in sync)."""
    if request.param == "one broker":
        return str(request.getfixturevalue("kafka_bootstrap"))
    return str(request.getfixturevalue("kafka_cluster").bootstrap_servers)


@pytest.mark.parametrize("mode", ["during-local", "during-commit"])
def test_killed_producer_is_settled_after_restart(
    mode: str,
    where: str,
    namespace: str,
    unique_name: Any,
    client_overrides: dict[str, Any],
    broker_kind: str,
) -> None:
    if mode == "during-commit" and broker_kind == "tansu":
        pytest.skip(TANSU_ABORTS_VISIBLE)
    kafka_bootstrap = where
    group, topic = unique_name("txk"), unique_name("txk")
    create_topic(kafka_bootstrap, topic, namespace, partitions=2)
    cfg = json.dumps(client_overrides)
    proc, msg_id, in_tx = _run_child([kafka_bootstrap, namespace, group, topic, mode, cfg])
    try:
        assert msg_id, "the child never stored its half message"
        if mode == "during-commit":
            assert in_tx
            # the COMMIT's message is in the log, uncommitted: only read_uncommitted sees it
            assert read_ids(kafka_bootstrap, topic, namespace, 1.0, committed=False) == [msg_id]
            assert read_ids(kafka_bootstrap, topic, namespace, 1.0) == []
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    listener = Listener(COMMIT, [COMMIT])
    gen = started(kafka_bootstrap, namespace, group, listener, client_overrides, instance_name="i1")
    next(gen)
    try:
        assert wait_for(lambda: read_ids(kafka_bootstrap, topic, namespace, 0.5) == [msg_id])
        time.sleep(3)
        assert read_ids(kafka_bootstrap, topic, namespace, 1.0) == [msg_id]
        assert listener.checked == [msg_id]
    finally:
        gen.close()


if __name__ == "__main__":
    child(*sys.argv[1:])
