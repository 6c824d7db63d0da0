"""Dead letters and their replay leave DEAD_LETTER and REPLAY trace events (what the
audit's ``dead_lettered`` and ``replayed`` figures count)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from consumer_fixtures import consumer_env  # noqa: F401
from consumer_helpers import LATER, SHORT_LEVELS, Recorder, read_records, trace_events

from rmqcompat.cli.main import main
from rmqcompat.topics.naming import TRACE_TOPIC, dlq_topic
from rmqcompat.trace import decode_record


@pytest.mark.slow
def test_dead_letters_and_replays_are_traced(env, start_forwarder) -> None:
    start_forwarder(SHORT_LEVELS)
    # a plain Kafka producer: no PUBLISH events
    ids = env.produce([{"body": f"body-{i}".encode(), "tags": "TA"} for i in range(2)])
    with env.consumer(Recorder(lambda msgs, ctx: LATER), max_reconsume_times=1):
        assert len(env.read(dlq_topic(env.group), 2, timeout=60)) == 2
    base = ["--bootstrap-servers", env.bootstrap, "--namespace", env.ns, "dlq", "replay"]
    base += ["--group", env.group, "--yes"]
    result = CliRunner().invoke(main, [*base, "--no-trace"])
    assert result.exit_code == 0, result.output
    untraced = read_records(env.bootstrap, TRACE_TOPIC, env.ns)
    assert untraced and not any(
        event["event"] == "REPLAY" for r in untraced for event in decode_record(r.value())
    )
    result = CliRunner().invoke(main, [*base, "--force"])  # traced, the default
    assert result.exit_code == 0, result.output
    events = trace_events(
        env.bootstrap, env.ns, lambda got: sum(e["event"] == "REPLAY" for e in got) >= 2
    )
    kinds = {(e["event"], e["msg_id"]) for e in events}
    for msg_id in ids:
        assert {("CONSUME", msg_id), ("SEND_BACK", msg_id), ("FORWARD", msg_id)} <= kinds
        assert {("DEAD_LETTER", msg_id), ("REPLAY", msg_id)} <= kinds
    (replay, *_) = [e for e in events if e["event"] == "REPLAY"]
    assert replay["group"] == env.group and replay["topic"] == env.topic
