"""``rmqcompat dlq replay`` end to end: messages dead-lettered by a failing consumer go back
to that group only, exactly once, across reruns and an interrupted (SIGKILLed) replay."""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner
from consumer_fixtures import consumer_env  # noqa: F401
from consumer_helpers import LATER, OK, SHORT_LEVELS, Recorder, make_consumer
from waiting import wait_until

from rmqcompat import properties as props
from rmqcompat.cli.main import main
from rmqcompat.config import ClientConfig
from rmqcompat.dlq.ledger import read_ledger
from rmqcompat.dlq.model import DeadLetter
from rmqcompat.dlq.replay import Operator, Replayer, ReplayOptions
from rmqcompat.properties import REPLAY_ID
from rmqcompat.topics.naming import dlq_topic, retry_topic


@pytest.fixture
def dead(env, start_forwarder):
    """``dead(n)``: n messages sent to the env's topic and dead-lettered after one retry by a
    failing listener; returns their message ids."""
    start_forwarder(SHORT_LEVELS)

    def dead_letter(count: int) -> list[str]:
        ids = env.produce([{"body": f"body-{i}".encode(), "tags": "TA"} for i in range(count)])
        with env.consumer(Recorder(lambda msgs, ctx: LATER), max_reconsume_times=1):
            assert len(env.read(dlq_topic(env.group), count, timeout=60)) == count
        return ids

    return dead_letter


def _cli(env, *args: str):
    base = ["--bootstrap-servers", env.bootstrap, "--namespace", env.ns]
    return CliRunner().invoke(main, [*base, *args])


def _replay_json(env, *args: str) -> dict:
    result = _cli(env, "dlq", "replay", "--group", env.group, "--yes", "--json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["groups"][env.group]


@pytest.mark.slow
def test_replay_reaches_only_the_failing_group_once_and_a_second_replay_is_a_no_op(env, dead):
    ids = dead(4)
    assert _replay_json(env) == {"replayed": 4, "skipped": 0, "failed": 0, "stopped": None}

    fixed, other = Recorder(lambda msgs, ctx: OK), Recorder(lambda msgs, ctx: OK)
    other_consumer = make_consumer(env.bootstrap, env.overrides, env.ns, env.group + "-other")
    other_consumer.subscribe(env.topic, "*")
    other_consumer.register_message_listener(other)
    with env.consumer(fixed), other_consumer:
        wait_until(lambda: len(fixed.deliveries) >= 4, 60, "the replayed messages")
        wait_until(lambda: len(other.deliveries) >= 4, 60, "the other group's first delivery")
        time.sleep(2)  # room for a duplicate to show up
    replayed = [d[3] for d in fixed.deliveries]
    assert sorted(m.get_property(props.ORIGIN_MESSAGE_ID) for m in replayed) == sorted(ids)
    assert {(m.topic, m.reconsume_times) for m in replayed} == {(env.topic, 0)}
    assert all(m.get_property(REPLAY_ID) for m in replayed)
    assert len({m.msg_id for m in replayed} & set(ids)) == 0  # new ids: never a first delivery
    # the other group saw the originals only, never a replay
    assert sorted(d[0] for d in other.deliveries) == sorted(ids)
    assert not any(d[3].get_property(REPLAY_ID) for d in other.deliveries)

    entries = [e for e in read_ledger(_config(env)) if e.group == env.group]
    assert sorted(e.origin_msg_id for e in entries) == sorted(ids)
    assert {e.replayed_to for e in entries} == {retry_topic(env.group)}
    assert {e.original_topic for e in entries} == {env.topic}
    assert all(e.who and e.host and "replay" in e.command for e in entries)
    assert {e.key for e in entries} == {m.get_property(REPLAY_ID) for m in replayed}

    before = len(env.read_all(retry_topic(env.group)))
    assert _replay_json(env) == {"replayed": 0, "skipped": 4, "failed": 0, "stopped": None}
    assert len(env.read_all(retry_topic(env.group))) == before


def _config(env) -> ClientConfig:
    return ClientConfig(env.bootstrap, namespace=env.ns)


def _replays_in_retry_topic(env) -> list[str]:
    records = env.read_all(retry_topic(env.group), settle=2.0)
    return [headers[props.ORIGIN_MESSAGE_ID] for headers, _ in records if REPLAY_ID in headers]


@pytest.mark.slow
def test_interrupted_replay_rerun_sends_the_rest_once(env, dead):
    ids = dead(12)
    command = [sys.executable, "-m", "rmqcompat.cli.main", "--bootstrap-servers", env.bootstrap]
    command += ["--namespace", env.ns, "dlq", "replay", "--group", env.group, "--yes"]
    command += ["--rate", "3"]  # transactions of 3, about one a second
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_until(lambda: len(list(read_ledger(_config(env)))) >= 3, 60, "a first chunk")
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    interrupted = _replays_in_retry_topic(env)
    assert 3 <= len(interrupted) < 12, "the kill came too late to interrupt the replay"

    rerun = _replay_json(env)
    assert rerun["replayed"] == 12 - len(interrupted)
    assert rerun["skipped"] == len(interrupted)
    assert sorted(_replays_in_retry_topic(env)) == sorted(ids)  # each exactly once
    assert len(list(read_ledger(_config(env)))) == 12


def test_force_replays_again_and_keeps_both_ledger_records(env, dead):
    (msg_id,) = dead(1)
    assert _replay_json(env)["replayed"] == 1
    assert _replay_json(env, "--force")["replayed"] == 1
    entries = sorted(read_ledger(_config(env)), key=lambda e: e.replay)
    assert [(e.origin_msg_id, e.replay) for e in entries] == [(msg_id, 0), (msg_id, 1)]
    assert entries[0].key != entries[1].key
    assert len(_replays_in_retry_topic(env)) == 2


def test_a_first_replay_counts_each_dead_letter_it_cannot_send_once(env):
    # 40 dead letters in chunks of 2: the chunks built while the replay sets up stand (the
    # ledger is new) and chunking goes on after them; a letter without an original topic
    # in either part is reported once and the rest are replayed, each once
    def letter(offset: int, original: bytes | None) -> DeadLetter:
        headers = ((props.UNIQ_KEY, f"M{offset}".encode()),)
        headers += () if original is None else ((props.RETRY_TOPIC, original),)
        return DeadLetter(env.group, "dlq", 0, offset, 1, b"body", None, headers)

    broken = {1, 37}
    letters = [letter(i, None if i in broken else env.topic.encode()) for i in range(40)]
    operator = Operator("me", "h", "test")
    collector_on: list[bool] = []  # the library leaves the application's collector alone
    replayer = Replayer(
        _config(env),
        env.group,
        operator,
        ReplayOptions(chunk=2),
        progress=lambda _done: collector_on.append(gc.isenabled()),
    )
    summary = replayer.run(letters)
    assert collector_on and all(collector_on)
    assert (summary.replayed, summary.failed, summary.stopped) == (38, 2, None)
    assert len(summary.problems) == 2 and all("dlq@0@" in p for p in summary.problems)
    replayed = sorted(entry.msg_id for entry in read_ledger(_config(env)))
    assert replayed == sorted(f"M{i}" for i in range(40) if i not in broken)
