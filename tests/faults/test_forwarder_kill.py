"""Forwarder processes SIGKILLed and restarted while parked records fall due: none is lost."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from collections import Counter

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

from rmqcompat import parking
from rmqcompat.devbroker import free_port
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.provision import ensure_topics
from rmqcompat.topics.spec import TopicSpec

TABLE = "100ms 1h"
LEVELS = DelayLevels.parse(TABLE)
RECORDS = 300
SPREAD_MS = 8_000
KILLS = 4
GIVE_UP_S = 120.0  # safety net only; nothing here asserts a duration
#: How long before a kill a record may have been forwarded and still be uncommitted: the
#: forwarder commits asynchronously every 200 ms; the rest is slack for the commit round
#: trip and for this test's reader, which sees records up to a poll (0.2 s) late.
UNCOMMITTED_WINDOW_S = 1.0

_RUN = (
    "import sys; from rmqcompat.cli.context import CliContext; "
    "from rmqcompat.cli.forwarder_cmd import forwarder; "
    "forwarder(sys.argv[3:], obj=CliContext(sys.argv[1], sys.argv[2]))"
)


def _park_spread(bootstrap: str, namespace: str) -> None:
    """Park RECORDS on the 1h level, due one after another over the next SPREAD_MS."""
    producer = Producer({"bootstrap.servers": bootstrap})
    hour, now = LEVELS.delay_ms(2), time.time_ns() // 1_000_000
    for i in range(RECORDS):
        parked_at = now - hour + 1_000 + i * SPREAD_MS // RECORDS
        record = parking.park(
            str(i).encode(), None, {}, real_topic="Orders", level=2, levels=LEVELS,
            namespace=namespace, now_ms=parked_at,
        )  # fmt: skip
        producer.produce(record.topic, record.value, headers=record.headers, partition=i % 4)
    assert producer.flush(30) == 0


class _Arrivals:
    """Reads the real topic from its start and counts what arrived."""

    def __init__(self, bootstrap: str, topic: str, overrides: dict) -> None:
        settings = {**overrides, "bootstrap.servers": bootstrap, "group.id": uuid.uuid4().hex}
        self._consumer = Consumer(settings)
        self._consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        self.seen: Counter[bytes] = Counter()
        self.times: list[float] = []  # monotonic read time of every arrival

    def wait_for(self, distinct: int) -> None:
        deadline = time.monotonic() + GIVE_UP_S
        while len(self.seen) < distinct:
            if time.monotonic() > deadline:
                raise AssertionError(f"only {len(self.seen)} of {distinct} records arrived")
            for msg in self._consumer.consume(500, 0.2):
                if not msg.error():
                    self.seen[msg.value()] += 1
                    self.times.append(time.monotonic())

    def near(self, moments: list[float], before_s: float, after_s: float) -> int:
        """Arrivals read within (moment - before_s, moment + after_s] of any moment."""
        return sum(1 for t in self.times if any(m - before_s < t <= m + after_s for m in moments))

    def close(self) -> None:
        self._consumer.close()


@pytest.mark.slow
def test_sigkilled_forwarders_lose_nothing(kafka_bootstrap, namespace, client_overrides):
    ensure_topics({"bootstrap.servers": kafka_bootstrap}, {"Orders": TopicSpec(1)}, namespace)
    level_topics = {topic: TopicSpec(4) for topic in LEVELS.topics()}
    ensure_topics({"bootstrap.servers": kafka_bootstrap}, level_topics, namespace)
    passthrough = [arg for k, v in client_overrides.items() for arg in ("-X", f"{k}={v}")]
    cmd = [sys.executable, "-c", _RUN, kafka_bootstrap, namespace, "run",
           "--message-delay-level", TABLE, *passthrough]  # fmt: skip
    arrivals = _Arrivals(kafka_bootstrap, f"{namespace}.Orders", client_overrides)
    _park_spread(kafka_bootstrap, namespace)
    kills: list[float] = []
    try:
        for round_no in range(1, KILLS + 1):
            proc = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
            # Kill mid-stream: once this round has moved the arrivals forward.
            arrivals.wait_for(round_no * RECORDS // (KILLS + 1))
            proc.send_signal(signal.SIGKILL)
            kills.append(time.monotonic())
            proc.wait()
        port = free_port()
        proc = subprocess.Popen([*cmd, "--metrics-port", str(port)], stderr=subprocess.DEVNULL)
        arrivals.wait_for(RECORDS)
        # The previous rounds may have forwarded everything already: SIGTERM only once the
        # service runs (its handler is installed), else it would die of the signal.
        _wait_healthy(port)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        arrivals.close()
    assert set(arrivals.seen) == {str(i).encode() for i in range(RECORDS)}
    duplicates = sum(arrivals.seen.values()) - RECORDS
    print(f"{KILLS} SIGKILLs, {RECORDS} records: 0 lost, {duplicates} duplicates")
    # At least once, and no more: a kill repeats only what the killed instance forwarded
    # but had not committed yet, i.e. what arrived in the last UNCOMMITTED_WINDOW_S before
    # the kill, or after it while the dead member still held its partitions (its session
    # timeout: the group cannot hand them to the next instance earlier).
    session_s = float(client_overrides["session.timeout.ms"]) / 1000
    bound = arrivals.near(kills, UNCOMMITTED_WINDOW_S, session_s)
    print(f"duplicate bound (arrivals around the kills): {bound}")
    assert duplicates <= bound


def _wait_healthy(port: int) -> None:
    deadline = time.monotonic() + GIVE_UP_S
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("the last forwarder never became healthy")
