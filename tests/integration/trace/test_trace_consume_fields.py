"""CONSUME events on a real broker are the reference encoding of each message.

Where the compiled core is built, it encodes the events of a settlement round into one
buffer (its ``Encodings``) and the trace thread packs that into records; where its direct
fetch reads the records, the fetch writes each record's event fields as it copies it and
settlement writes the events from those (``native/src/received.rs``), without reading
the messages. Every event read back from the trace topic must be what the pure-Python
encoder writes for the message the listener saw, field for field.
"""

from __future__ import annotations

import gc
from typing import Any
from unittest import mock

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


def test_consume_events_are_the_reference_encoding_of_each_message(env) -> None:
    specs = [dict(SHAPES[i % len(SHAPES)], body=b"%d" % i) for i in range(70)]
    ids = env.produce(specs)
    recorder = Recorder()
    kept: list[int] = []  # events noted from the fields the fetch kept, by hand-over
    as_encoded = hooks._as_encoded  # what every encoded hand-over passes

    def counted(events: Any) -> Any:
        kept.append(getattr(events, "noted", 0))  # the core's KeptEvents say how many
        return as_encoded(events)

    with (
        mock.patch.object(hooks, "_as_encoded", counted),
        env.consumer(recorder, consume_message_batch_max_size=3),
    ):
        wait_until(lambda: len(recorder.deliveries) >= len(ids), what="every delivery")
    if CORE is not None and CORE.plugin_available():  # the direct fetch: fields kept
        # all but the first message of a take's run per partition, which the intake
        # decodes by itself
        assert sum(kept) >= len(ids) // 2, kept
    seen = {d[3].msg_id: d[3] for d in recorder.deliveries}
    assert len(seen) == len(ids)  # the raw-header records' ids are their places
    consumed = lambda got: [e for e in got if e["event"] == "CONSUME"]  # noqa: E731
    events = consumed(trace_events(env.bootstrap, env.ns, lambda got: len(consumed(got)) >= 70))
    assert len(events) == 70
    for event in events:
        msg = seen[event["msg_id"]]
        who = bulk.identity(event["client_id"], event["host"], event["namespace"])
        call = ([msg], (), event["duration_ms"], "RECONSUME_LATER", None)
        with mock.patch.object(bulk, "_consume_calls", bulk.consume_calls):  # pure Python
            (reference,) = bulk.consumed_calls(who, event["timestamp_ms"], event["group"], [call])
        assert event == decode(reference)


def test_no_process_queue_stays_borrowed_while_the_collector_runs_python(env) -> None:
    """Python code the collector runs (``gc.callbacks``, finalizers) after any allocation
    may hand the GIL to a listener thread, which reads its batch's process queue as it
    starts the batch. A queue the core held borrowed across an allocation (the intake's
    batching, while it handed each batch its kept CONSUME fields) failed that read: a
    panic on the listener thread, whose batch then never ran. Here every collection reads
    each of the consumer's queues, as that thread would, in a traced consumer whose fetch
    keeps the fields."""
    ids = env.produce([{"body": b"%d" % i} for i in range(600)])
    recorder = Recorder()
    consumer = env.consumer(recorder, consume_message_batch_max_size=3)
    failed: list[RuntimeError] = []

    def read_queues(_phase: str, _info: dict[str, int]) -> None:
        engine = getattr(consumer, "_engine", None)  # there once the consumer started
        partitions = engine.partitions if engine is not None else None
        for key in partitions.keys() if partitions is not None else ():
            state = partitions.get(key)
            try:
                _ = state is not None and state.pq.dropped
            except RuntimeError as exc:  # "Already mutably borrowed"
                failed.append(exc)

    threshold = gc.get_threshold()
    gc.callbacks.append(read_queues)
    gc.set_threshold(5)  # a collection every 5 new container objects
    try:
        with consumer:
            wait_until(lambda: len(recorder.deliveries) >= len(ids), what="every delivery")
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(read_queues)
    assert sorted(recorder.ids()) == sorted(ids)
    assert not failed, f"{len(failed)} reads of a borrowed queue: {failed[0]}"
