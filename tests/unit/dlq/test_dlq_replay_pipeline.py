"""The replay's hot path without a broker: transactions in order with the next chunk built
while one commits, a failed commit stopping the replay with nothing counted as replayed
that was not committed, REPLAY trace events from the ledger rows, the trace switch, the
garbage collector restored, and the read model's lazily decoded fields."""

from __future__ import annotations

import gc
import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException
from unit_fakes import ListSink, dead_letters

from rmqcompat import properties as props
from rmqcompat.cli.collector import collector_paused
from rmqcompat.config import ClientConfig
from rmqcompat.dlq.chunk import ChunkBuilder, Operator
from rmqcompat.dlq.model import DeadLetter
from rmqcompat.dlq.replay import Replayer, ReplayOptions, ReplaySummary
from rmqcompat.dlq.transactions import produce_all
from rmqcompat.trace import Tracer
from rmqcompat.trace.events import Emitter
from rmqcompat.trace.schema import SCHEMA

OPERATOR = Operator("me", "h", "rmqcompat dlq replay --group G")
CONFIG = ClientConfig("127.0.0.1:1", namespace="ns")


class FakeProducer:
    """Records the transaction calls in order; the ``fail_commit``-th commit raises. Commit
    number k of ``chunks`` waits (up to 5 s) for chunk k + 1 to be built: the replay
    builds it while the broker commits, or that commit would wait in vain."""

    def __init__(self, fail_commit: int | None = None, chunks: int = 0) -> None:
        self.calls: list[str] = []
        self.produced: list[bytes] = []
        self.built_during_commit: list[bool] = []
        self.builds = threading.Condition()
        self._fail_commit = fail_commit
        self._chunks = chunks
        self._commits = 0

    def begin_transaction(self) -> None:
        self.calls.append("begin")

    def produce(self, topic: str, value: bytes, key: bytes | None, *_: Any) -> None:
        if not topic.endswith("replay-log"):
            self.produced.append(value)

    def commit_transaction(self, _timeout: float) -> None:
        self._commits += 1
        number = self._commits
        if number < self._chunks:
            with self.builds:
                built = self.builds.wait_for(lambda: self._built() > number, timeout=5)
            self.built_during_commit.append(built)
        self.calls.append(f"commit {number}")
        if number == self._fail_commit:
            raise KafkaException(KafkaError(KafkaError._FENCED))

    def abort_transaction(self, _timeout: float) -> None:
        self.calls.append("abort")

    def _built(self) -> int:
        return sum(call.startswith("build") for call in self.calls)


class Builds:
    """A ChunkBuilder that logs each build into the producer's call list."""

    def __init__(self, producer: FakeProducer) -> None:
        self._builder = ChunkBuilder("G", "retry", "ns", "ns.rmq.replay-log", OPERATOR)
        self._producer = producer

    def build(self, pending: Any, when_ms: int) -> Any:
        chunk = self._builder.build(pending, when_ms)
        with self._producer.builds:
            self._producer.calls.append(f"build {len(pending)}")
            self._producer.builds.notify_all()
        return chunk


def _replay(
    letters: list[DeadLetter],
    producer: FakeProducer,
    replayer: Replayer,
    summary: ReplaySummary | None = None,
) -> ReplaySummary:
    summary = summary or ReplaySummary()
    chunks = replayer._chunks(letters, {}, summary)
    with ThreadPoolExecutor(1) as committer:
        replayer._replay(
            producer,
            partial(produce_all, producer),
            Builds(producer),
            chunks,
            deque(),
            committer,
            summary,
        )  # type: ignore[arg-type]
    return summary


def test_every_chunk_is_one_transaction_and_the_next_is_built_while_one_commits() -> None:
    producer = FakeProducer(chunks=3)
    replayer = Replayer(CONFIG, "G", OPERATOR, ReplayOptions(chunk=2), trace_enabled=False)
    summary = _replay(dead_letters(5, origin=True), producer, replayer)
    assert (summary.replayed, summary.failed, summary.stopped) == (5, 0, None)
    assert producer.produced == [b"b0", b"b1", b"b2", b"b3", b"b4"]  # each once, in order
    assert producer.built_during_commit == [True, True]
    transactions = [call for call in producer.calls if not call.startswith("build")]
    assert transactions == ["begin", "commit 1", "begin", "commit 2", "begin", "commit 3"]


def test_a_failed_commit_aborts_and_counts_only_committed_chunks_as_replayed() -> None:
    producer = FakeProducer(fail_commit=2)
    replayer = Replayer(CONFIG, "G", OPERATOR, ReplayOptions(chunk=2), trace_enabled=False)
    summary = ReplaySummary()
    with pytest.raises(KafkaException):
        _replay(dead_letters(6, origin=True), producer, replayer, summary)
    transactions = [call for call in producer.calls if not call.startswith("build")]
    assert transactions == ["begin", "commit 1", "begin", "commit 2", "abort"]  # no third
    assert (summary.replayed, summary.failed) == (2, 2)
    assert summary.problems == ["2 dead letters not replayed (transaction failed)"]


def test_committed_replays_are_traced_from_the_ledger_rows_one_event_each() -> None:
    producer = FakeProducer()
    replayer = Replayer(CONFIG, "G", OPERATOR, ReplayOptions(chunk=2))
    sink = ListSink()
    replayer._tracer = Tracer(sink, Emitter("me@1@replay-G", "ns"))  # type: ignore[arg-type]
    _replay(dead_letters(3, origin=True), producer, replayer)
    assert [(e["event"], e["msg_id"], e["origin_msg_id"]) for e in sink.events] == [
        ("REPLAY", "M0", "O0"),
        ("REPLAY", "M1", "O1"),
        ("REPLAY", "M2", "O2"),
    ]
    assert {(e["group"], e["topic"], e["target_topic"]) for e in sink.events} == {
        ("G", "Orders", "%RETRY%G")
    }
    assert {e["reason"] for e in sink.events} == {OPERATOR.command}
    # complete events: every schema field present, so the encoder never looks them up one by one
    assert all(list(e) == [f["name"] for f in SCHEMA["fields"]] for e in sink.events)


def test_the_trace_switch_turns_replay_events_off() -> None:
    assert Replayer(CONFIG, "G", OPERATOR)._tracer.enabled
    assert not Replayer(CONFIG, "G", OPERATOR, trace_enabled=False)._tracer.enabled


def test_the_garbage_collector_is_paused_only_while_replaying() -> None:
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        assert not gc.isenabled()
        raise RuntimeError("a replay that failed")
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # the caller's choice is kept
    finally:
        gc.enable()


def test_the_first_header_of_a_name_counts_and_only_the_needed_ones_are_decoded() -> None:
    headers = (
        (props.UNIQ_KEY, b"FIRST"),
        (props.UNIQ_KEY, b"SECOND"),
        (props.ORIGIN_MESSAGE_ID, None),
        (props.RETRY_TOPIC, b"Ord\xffers"),
    )
    dead = DeadLetter("G", "ns.rmq.dlq.G", 0, 3, 1000, b"", None, headers)
    assert dead.msg_id == "FIRST" and dead.origin_msg_id == "FIRST"  # a None value: absent
    assert dead.original_topic == "Ord\ufffders"
    assert props.ORIGIN_MESSAGE_ID in dead.layout.first and props.TAGS not in dead.layout.first
    assert dead._properties is None  # nothing else was decoded
    assert dead.properties[props.UNIQ_KEY] == "FIRST"
    assert dead.properties[props.ORIGIN_MESSAGE_ID] == ""
