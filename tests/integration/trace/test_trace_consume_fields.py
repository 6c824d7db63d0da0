"""CONSUME events written from the fields the intake kept are the reference's events.

With the compiled core, a message the intake takes from a direct batch keeps its CONSUME
event fields with its process-queue entry, written from the record's headers, and its
settlement copies them into the event (``native/src/received.rs``). Every event read back
from the trace topic must be what the pure-Python encoder writes for the message the
listener saw, field for field, whichever way it was written.
"""

from __future__ import annotations

from typing import Any

import pytest
from consumer_fixtures import consumer_env  # noqa: F401
from consumer_helpers import Recorder, trace_events
from waiting import wait_until

from rmqcompat import properties as props
from rmqcompat.core import CORE
from rmqcompat.trace import bulk, hooks
from rmqcompat.trace.codec import decode

pytestmark = pytest.mark.integration

#: Messages of every shape the fields come in: tags (text beyond ASCII too), keys, an
#: origin id, a born time, a reconsume count, none of them, and no UNIQ_KEY at all (the
#: id is then the record's place).
SHAPES: list[dict[str, Any]] = [
    {"tags": "TagA"},
    {"props": {props.KEYS: "k1 k2"}},
    {"tags": "标签", "props": {props.KEYS: "ключ", props.ORIGIN_MESSAGE_ID: "ORIGIN1"}},
    {"props": {props.BORN_TIMESTAMP: "1700000000123", props.RECONSUME_TIME: "3"}},
    {},
    {"raw_headers": [(props.TAGS, b"raw"), (props.KEYS, b"rk")]},
    {"body": b"", "props": {"user": "v"}},
]


def test_consume_events_are_the_reference_encoding_of_each_message(env, monkeypatch) -> None:
    kept: list[int] = []  # events written from kept fields, per hand-over
    written_kept = hooks.consumed_kept

    def counting(tracer: Any, events: Any) -> None:
        kept.append(len(events))
        written_kept(tracer, events)

    monkeypatch.setattr(hooks, "consumed_kept", counting)
    specs = [dict(SHAPES[i % len(SHAPES)], body=b"%d" % i) for i in range(70)]
    ids = env.produce(specs)
    recorder = Recorder()
    with env.consumer(recorder, consume_message_batch_max_size=3):
        wait_until(lambda: len(recorder.deliveries) >= len(ids), what="every delivery")
    seen = {d[3].msg_id: d[3] for d in recorder.deliveries}
    assert len(seen) == len(ids)  # the raw-header records' ids are their places
    consumed = lambda got: [e for e in got if e["event"] == "CONSUME"]  # noqa: E731
    events = consumed(trace_events(env.bootstrap, env.ns, lambda got: len(consumed(got)) >= 70))
    assert len(events) == 70
    for event in events:
        msg = seen[event["msg_id"]]
        who = bulk.identity(event["client_id"], event["host"], event["namespace"])
        head = bulk.consume_head(who, event["timestamp_ms"], event["group"])
        statuses = {"SUCCESS": bulk.SUCCESS, "RECONSUME_LATER": b""}
        call = ([msg], (), event["duration_ms"], "RECONSUME_LATER", None)
        (reference,) = bulk.consume_calls(head, statuses, [call])
        assert event == decode(reference)
    if CORE is not None:  # most were written from kept fields (not a run's first record)
        assert sum(kept) >= 40
