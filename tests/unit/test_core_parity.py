"""The compiled core against its pure-Python reference: the same inputs, the same results.

Every function of ``rmqcompat._core`` has a Python counterpart (``rmqcompat.core``); these
tests run generated inputs, well-formed and not, through both and require the same
outcome, value or exception. The core is imported directly, so they run also where
``RMQCOMPAT_PURE_PYTHON`` switches it off for the rest of the suite; where it is not built
they are skipped, except in CI, which builds it. The core's ``PendingSend``, a class with
threads waiting on it, is held to its counterpart differently: the future contract tests of
``tests/unit/producer`` run on both (``tests/unit/producer/conftest.py``).
"""

from __future__ import annotations

import dataclasses
import gc
import os
import subprocess
import sys
import time
import types
import weakref
from collections import deque
from typing import Any
from unittest import mock

import pytest
from compiled_core import compiled_core
from confluent_kafka import TIMESTAMP_LOG_APPEND_TIME, KafkaError, KafkaException, Message
from consumed_records import NUMBER_TEXTS, NUMBERED, RECORDS, FakeRecord
from hypothesis import given, settings
from hypothesis import strategies as st

from rmqcompat import callbacks, clock, message_id, parking, wire
from rmqcompat import properties as props
from rmqcompat.consumer import intake, sendback_record
from rmqcompat.core import PURE_PYTHON_ENV
from rmqcompat.forwarder import holding, plan, run
from rmqcompat.message import Message as SentMessage
from rmqcompat.message import MessageExt
from rmqcompat.process_queue import ProcessQueue
from rmqcompat.producer import records
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.naming import from_kafka_topic
from rmqcompat.trace import batch, bulk
from rmqcompat.trace.codec import decode

NAMES = st.sampled_from(["UNIQ_KEY", "TAGS", "KEYS", "a", "ü", ""]) | st.text(max_size=6)
VALUES = (
    st.binary(max_size=12)  # often not UTF-8
    | st.text(max_size=12).map(lambda t: t.encode("utf-8", "surrogatepass"))
    | st.none()
    | st.builds(bytearray, st.binary(max_size=4))
    | st.text(max_size=4)  # a str value: not bytes
)
PAIRS = st.tuples(NAMES, VALUES)
ODD = st.tuples(NAMES) | st.tuples(NAMES, VALUES, VALUES) | st.lists(VALUES, max_size=2)
HEADERS = (
    st.lists(PAIRS, max_size=8)
    | st.lists(PAIRS | ODD, max_size=4)
    | st.lists(PAIRS, max_size=4).map(tuple)
    | st.none()
)


def _outcome(fast: Any, headers: Any) -> tuple[Any, ...]:
    with mock.patch.object(wire, "_decode_well_formed", fast):
        try:
            return ("value", wire.decode_properties(headers))
        except Exception as exc:  # the exception is the outcome compared
            return ("raised", type(exc), str(exc))


@given(HEADERS)
def test_header_decoding_is_the_same_compiled_and_pure(headers: Any) -> None:
    core = compiled_core()
    assert core.decode_headers(headers) == wire.decode_well_formed(headers)
    assert _outcome(core.decode_headers, headers) == _outcome(wire.decode_well_formed, headers)


#: Numbers at and beyond the limits of Avro's int and long (the encoders raise beyond).
NUMBERS = st.integers(min_value=-(2**64), max_value=2**64) | st.sampled_from(
    [0, 1, 8191, 8192, 2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**63 - 1, 2**63, -(2**63)]
)
TEXT = st.text(max_size=8)  # lone surrogates included: not UTF-8 encodable
PROPERTIES = st.dictionaries(
    st.sampled_from([props.ORIGIN_MESSAGE_ID, props.TAGS, props.KEYS, "other"]),
    TEXT | st.none() | st.binary(max_size=3),
)
MESSAGES = st.builds(
    MessageExt,
    topic=TEXT,
    body=st.just(b""),
    msg_id=TEXT | st.just("m" * 9000),  # a length of two varint bytes and more
    queue_id=NUMBERS,
    queue_offset=NUMBERS,
    born_timestamp=NUMBERS,
    store_timestamp=st.just(0),
    reconsume_times=NUMBERS,
    properties=PROPERTIES,
)
CONSUME_CALLS = st.lists(MESSAGES, max_size=4).flatmap(
    lambda msgs: st.tuples(
        st.just(msgs),
        st.sets(st.integers(0, max(len(msgs) - 1, 0))),
        st.none() | st.lists(NUMBERS, min_size=len(msgs), max_size=len(msgs)),
    )
)


def _result(kernel: Any, *args: Any) -> tuple[Any, ...]:
    """``kernel(*args)``'s value (a trace encoder's ``Encodings`` read as the list of its
    events' bytes), or the type of what it raised."""
    try:
        value = kernel(*args)
    except Exception as exc:  # the exception's type is the outcome compared
        return ("raised", type(exc))
    return ("value", list(value) if isinstance(value, compiled_core().Encodings) else value)


#: Listener calls as ``consume_calls`` takes them: the failed ones' status may be one the
#: table lacks, their duration beyond a long.
CALLS = st.lists(
    st.tuples(
        CONSUME_CALLS,
        NUMBERS,
        st.sampled_from(["RECONSUME_LATER", "EXCEPTION", "TIME_OUT", "UNKNOWN"]),
    ).map(lambda c: (c[0][0], c[0][1], c[1], c[2], c[0][2])),
    max_size=3,
)


@given(CALLS, st.binary(max_size=6), st.booleans())
def test_consume_calls_trace_events_are_the_same_compiled_and_pure(
    calls: list[Any], head: bytes, success_known: bool
) -> None:
    statuses = {"RECONSUME_LATER": b"\x02\x02", "EXCEPTION": b"\x02\x04", "TIME_OUT": b"\x02\x06"}
    if success_known:
        statuses["SUCCESS"] = b"\x02\x00"
    compiled = _result(compiled_core().consume_calls, head, statuses, calls)
    assert compiled == _result(bulk.consume_calls, head, statuses, calls)


SENT_BACK = st.tuples(NUMBERS, MESSAGES, NUMBERS, NUMBERS, st.none() | NUMBERS, TEXT)


@given(st.lists(SENT_BACK, max_size=3), st.binary(max_size=3), st.binary(max_size=6))
def test_send_back_trace_events_are_the_same_compiled_and_pure(
    sends: list[Any], kind: bytes, who: bytes
) -> None:
    args = (kind, who, b"\x02\x02G", sends)
    compiled = _result(compiled_core().send_back_events, *args)
    assert compiled == _result(bulk.send_back_events, *args)


SENT = st.builds(
    SentMessage,
    topic=st.from_regex(r"[A-Za-z0-9_-]{1,12}", fullmatch=True),  # a name Message accepts
    body=st.just(b""),
    tags=st.none() | TEXT,
    keys=st.none() | TEXT | st.lists(TEXT, max_size=2),
    delay_time_level=st.sampled_from([0, 3]) | NUMBERS,
    deliver_time_ms=st.none() | NUMBERS,
)
WRITTEN = st.lists(
    st.tuples(
        st.sampled_from([props.DUE_TIME, "other"]),
        st.none() | NUMBERS.map(lambda n: str(n).encode()) | st.just(b"soon"),
    ),
    max_size=2,
)
ACKNOWLEDGED = st.tuples(NUMBERS, SENT, TEXT, TEXT, st.none() | NUMBERS, WRITTEN)


@given(st.lists(ACKNOWLEDGED, max_size=3), st.binary(max_size=3), st.binary(max_size=6))
def test_publish_trace_events_are_the_same_compiled_and_pure(
    acknowledged: list[Any], kind: bytes, who: bytes
) -> None:
    args = (kind, who, acknowledged)
    compiled = _result(compiled_core().publish_events, *args)
    assert compiled == _result(bulk.publish_events, *args)


ODD_FIELDS = st.fixed_dictionaries(
    {},
    optional={
        "tags": st.none() | TEXT | st.integers(),
        "keys": st.none() | TEXT | st.lists(TEXT, max_size=2),
        "flag": st.booleans() | NUMBERS | st.floats(-1e6, 1e6) | st.just("7"),
        "properties": st.dictionaries(TEXT, TEXT, max_size=1),
        "delay_time_level": st.integers(-2, 2) | st.just("1"),
        "deliver_time_ms": st.none() | NUMBERS,
    },
)


@given(SENT, ODD_FIELDS, TEXT, NUMBERS | st.floats(0, 2e12))
def test_plain_headers_are_the_same_compiled_and_pure(
    msg: SentMessage, odd: dict[str, Any], msg_id: str, now_ms: Any
) -> None:
    """Fields set after the message checked them, to values it would refuse, too."""
    for name, value in odd.items():
        object.__setattr__(msg, name, value)
    args = (msg, msg_id, now_ms)
    compiled = _result(compiled_core().plain_headers, *args)
    assert compiled == _result(records.plain_headers, *args)


def test_compiled_publish_events_decode_as_the_events_they_stand_for() -> None:
    """A parked send's event, encoded by the core, read back with the trace codec."""
    core = compiled_core()
    msg = SentMessage("Orders", b"", tags="t", delay_time_level=3)
    msg.keys = ["a", "b"]  # set after the message checked its keys: joined when encoded
    written = [(props.DUE_TIME, b"1700000010000")]
    sent = (1_700_000_000_001, msg, "id-1", "ns.rmq.delay.3", 1_700_000_000_000, written)
    who = bulk.identity("client", "host", "ns")
    with mock.patch.object(bulk, "_publish_events", core.publish_events):
        record = decode(bulk.published(who, [sent])[0])
    seen = {name: record[name] for name in ("event", "topic", "physical_topic", "keys")}
    assert seen == {
        "event": "PUBLISH",
        "topic": "Orders",
        "physical_topic": "ns.rmq.delay.3",
        "keys": "a b",
    }
    assert (record["delay_level"], record["due_ms"], record["born_ms"]) == (
        3,
        1_700_000_010_000,
        1_700_000_000_000,
    )


def test_compiled_consume_events_decode_as_the_events_they_stand_for() -> None:
    """A real call's events, encoded by the core, read back with the trace codec."""
    core = compiled_core()
    msg = MessageExt("Orders", b"", "id-1", 2, 70_000, 1_700_000_000_000, 0, 3, {props.TAGS: "t"})
    who = bulk.identity("client", "host", "ns")
    call = ([msg], {0}, 5, "RECONSUME_LATER", None)
    with mock.patch.object(bulk, "_consume_calls", core.consume_calls):
        events = bulk.consumed_calls(who, 1_700_000_000_001, "g", [call])
    record = decode(events[0])
    seen = {name: record[name] for name in ("msg_id", "topic", "offset", "tags", "status")}
    assert seen == {
        "msg_id": "id-1",
        "topic": "Orders",
        "offset": 70_000,
        "tags": "t",
        "status": "RECONSUME_LATER",
    }
    assert (record["reconsume_times"], record["duration_ms"], record["group"]) == (3, 5, "g")


class _LoudTopic(MessageExt):
    """A MessageExt whose ``topic`` reads otherwise than its slot holds."""

    def __getattribute__(self, name: str) -> Any:
        value = super().__getattribute__(name)
        return value.upper() if name == "topic" else value


def test_the_core_reads_a_messages_fields_as_attribute_access_does() -> None:
    """The core reads exactly a MessageExt's fields from its slots; a subclass's, and an
    emptied slot, through attribute access: what the pure path reads, or raises."""
    core = compiled_core()
    loud = _LoudTopic("Orders", b"", "id-1", 2, 7, 1, 0, 3, {})
    emptied = MessageExt("Orders", b"", "id-1", 2, 7, 1, 0, 3, {})
    del emptied.queue_offset
    statuses = {"SUCCESS": b"\x02\x00", "RECONSUME_LATER": b"\x02\x02"}
    for msg in (loud, emptied):
        args = (b"", statuses, [([msg], (), 0, "RECONSUME_LATER", None)])
        assert _result(core.consume_calls, *args) == _result(bulk.consume_calls, *args)
    who = bulk.identity("client", "host", "ns")
    with mock.patch.object(bulk, "_consume_calls", core.consume_calls):
        events = bulk.consumed_calls(who, 1, "g", [([loud], (), 0, "RECONSUME_LATER", None)])
    assert decode(events[0])["topic"] == "ORDERS"


#: A parked record's decoded headers (text, as the decoder gives them; None too) with
#: numbers in and out of an Avro int, signs, non-ASCII digits, and empty values.
DIGITS = st.sampled_from(["0", "7", "-3", "2147483647", "2147483648", "-2147483649", "007",
                          "12345678901", "-", "+5", "²", "٣", "1.5", " 4", "4\n", ""])  # fmt: skip
FORWARD_PROPERTIES = st.dictionaries(
    st.sampled_from(
        [
            props.REAL_TOPIC,
            props.UNIQ_KEY,
            props.RETRY_TOPIC,
            props.ORIGIN_MESSAGE_ID,
            props.RECONSUME_TIME,
            props.DELAY,
            "other",
        ]
    ),
    TEXT | DIGITS | st.none(),
)
SOURCES = st.builds(
    Message,
    topic=st.none() | st.text(st.characters(codec="utf-8"), max_size=8),
    partition=st.integers(-1, 2**31 - 1),
    offset=st.integers(-1, 2**63 - 1),
)
FORWARDED = st.lists(st.tuples(NUMBERS, SOURCES, FORWARD_PROPERTIES, NUMBERS), max_size=4)


@given(FORWARDED, st.binary(max_size=3), st.binary(max_size=6))
def test_forward_trace_events_are_the_same_compiled_and_pure(
    records: Any, kind: bytes, who: bytes
) -> None:
    args = (kind, who, records)
    assert _result(compiled_core().forward_events, *args) == _result(bulk.forward_events, *args)


SOME_TEXT = TEXT | st.none()
REPLAYED = st.lists(st.tuples(TEXT, SOME_TEXT, SOME_TEXT, SOME_TEXT), max_size=4)
#: Ledger rows, or any sequences: what a replay hands over, its fields read at places.
ROWS = st.lists(st.lists(SOME_TEXT | st.integers(0, 3), max_size=7).map(tuple), max_size=4)
PLACES = st.tuples(*[st.integers(0, 7)] * 4)


@given(REPLAYED | st.lists(st.tuples(TEXT), max_size=2), st.binary(max_size=6))
def test_replay_trace_events_are_the_same_compiled_and_pure(letters: Any, head: bytes) -> None:
    args = (head, b"\x02\x02c", letters)
    assert _result(compiled_core().replay_events, *args) == _result(bulk.replay_events, *args)


@given(ROWS, PLACES)
def test_replay_trace_events_read_at_places_are_the_same_compiled_and_pure(
    rows: Any, places: Any
) -> None:
    args = (b"h", b"\x02\x02c", rows, places)
    assert _result(compiled_core().replay_events, *args) == _result(bulk.replay_events, *args)


def test_compiled_replay_events_decode_as_the_events_they_stand_for() -> None:
    """A replayed dead letter's event, encoded by the core, read back with the trace codec."""
    core = compiled_core()
    who = bulk.identity("replay-G", "host", "ns")
    with mock.patch.object(bulk, "_replay_events", core.replay_events):
        (event,) = bulk.replayed(who, 11, "G", [("ID1", "Orders", "%RETRY%G", "ID0")], "cmd")
    record = decode(event)
    fields = ("event", "group", "msg_id", "origin_msg_id", "topic", "target_topic", "reason")
    assert [record[name] for name in fields] == [
        "REPLAY", "G", "ID1", "ID0", "Orders", "%RETRY%G", "cmd"
    ]  # fmt: skip


def test_compiled_forward_events_decode_as_the_events_they_stand_for() -> None:
    """A forwarded record's event, encoded by the core, read back with the trace codec."""
    core = compiled_core()
    source = Message(topic="ns.rmq.delay.1s", partition=2, offset=70_000)
    properties = {props.REAL_TOPIC: "Orders", props.RECONSUME_TIME: "2", props.DELAY: "x"}
    who = bulk.identity("client", "host", "ns")
    with mock.patch.object(bulk, "_forward_events", core.forward_events):
        (event,) = bulk.forwarded(who, [(1_700_000_000_001, source, properties, 1_700_000_000_000)])
    record = decode(event)
    assert {name: record[name] for name in ("event", "msg_id", "topic", "target_topic")} == {
        "event": "FORWARD",
        "msg_id": "ns.rmq.delay.1s@2@70000",
        "topic": "Orders",
        "target_topic": "Orders",
    }
    assert (record["reconsume_times"], record["delay_level"]) == (2, None)


def _encodings(ids: list[str]) -> Any:
    """The core's ``Encodings`` of REPLAY events of these msg ids (of as many lengths)."""
    return compiled_core().replay_events(b"\x01", b"\x00", [(i, "T", "U", None) for i in ids])


def test_encodings_read_as_the_sequence_of_their_events() -> None:
    events = _encodings(["a", "bb", ""])
    each = [bulk.replay_events(b"\x01", b"\x00", [(i, "T", "U", None)])[0] for i in ("a", "bb", "")]
    assert (len(events), list(events), events[-1]) == (3, each, each[2])
    with pytest.raises(IndexError):
        events[3]


#: A write's events, as the sink packs them: a list of ``bytes`` or the core's encodings.
PACKED_PARTS = st.lists(
    st.lists(st.binary(max_size=40) | st.sampled_from([b"", b"x" * 300]), max_size=8)
    | st.lists(st.text(max_size=40) | st.just("x" * 300), max_size=8).map(_encodings),
    max_size=5,
)


@given(PACKED_PARTS, st.binary(max_size=10), st.integers(0, 8), st.integers(0, 120))
def test_trace_records_are_packed_the_same_compiled_and_pure(
    parts: list[Any], header: bytes, max_events: int, max_bytes: int
) -> None:
    """The core packs encodings as the pure path packs the same events as ``bytes``."""
    compiled = _result(compiled_core().pack_events, parts, header, max_events, max_bytes)
    as_bytes = [list(part) for part in parts]
    assert compiled == _result(batch.pack_events, as_bytes, header, max_events, max_bytes)


#: The forwarder's clock and the records' append times: a fixed now, times around it.
FORWARD_NOW = 1_700_000_000_000
LONG_LIMITS = [2**63 - 1, 2**63, -(2**63), -(2**63) - 1]
OFFSETS = st.integers(-70_000, 70_000) | st.sampled_from([-1000, -501, -500, 499, 500, 1000])
DUE_TEXT = (
    OFFSETS.map(lambda d: str(FORWARD_NOW + d))
    | st.sampled_from([*map(str, LONG_LIMITS), "+5", "-5", "007", "", "x1", "1_0", "--1", "٣"])
    | TEXT
)
QID_TEXT = st.sampled_from(["0", "3", "-1", "-2", "+1", "x", "", *map(str, LONG_LIMITS)]) | TEXT
PARKED_NAMES = [props.DUE_TIME, props.REAL_TOPIC, props.REAL_QID, props.TIMER_DELIVER_MS, "U"]
PARKED = st.fixed_dictionaries(
    {props.DUE_TIME: DUE_TEXT, props.REAL_TOPIC: st.sampled_from(["T", "%RETRY%g", ""])},
    optional={props.REAL_QID: QID_TEXT, props.TIMER_DELIVER_MS: DUE_TEXT, "U": TEXT},
).map(lambda p: [(name, value.encode("utf-8", "surrogatepass")) for name, value in p.items()])
PARKED_HEADERS = (
    PARKED
    | PARKED.flatmap(lambda h: st.permutations(h))
    | st.lists(st.tuples(st.sampled_from(PARKED_NAMES), VALUES), max_size=5)
    | HEADERS
)
APPEND_MS = st.none() | OFFSETS.map(lambda d: FORWARD_NOW + d) | st.sampled_from([2**63 - 1])
DELAYS = st.sampled_from([0, 1, 999, 1000, 2000, 2001, 10_000, 7_200_000])


@settings(max_examples=400)  # about one in ten is released or waits: the rest fall back
@given(PARKED_HEADERS, APPEND_MS, DELAYS, OFFSETS.map(lambda d: FORWARD_NOW + d))
def test_the_forwarders_plain_release_is_the_same_compiled_and_pure(
    headers: Any, append_ms: int | None, delay_ms: int, now_ms: int
) -> None:
    args = (headers, append_ms, delay_ms, now_ms)
    assert _result(compiled_core().plain_release, *args) == _result(plan.plain_release, *args)


def test_the_forwarders_plain_release_agrees_at_every_bound_compiled_and_pure() -> None:
    """Due times at and next to each bound of the rules (the park lag, the clock jump)."""
    core, now = compiled_core(), FORWARD_NOW
    for delay in (0, 1, 999, 1000, 2000, 2001, 2002, 10_000):
        for append in (None, now - delay, now - delay - 1, now - delay + 1, now):
            latest = now + delay if append is None else append + delay
            bounds = (now, latest, latest - min(1000, delay // 2), now + delay + 60_000)
            for stamped in (b + e for b in bounds for e in (-1, 0, 1)):
                headers = [("REAL_TOPIC", b"T"), ("DUE_TIME", str(stamped).encode())]
                args = (headers, append, delay, now)
                assert core.plain_release(*args) == plan.plain_release(*args), args


def test_the_core_releases_a_due_parked_record_itself() -> None:
    """The core takes the common case itself (None would send it down the general path)."""
    headers = [("REAL_TOPIC", b"T"), ("DUE_TIME", b"1000"), ("REAL_QID", b"2"), ("U", b"u")]
    properties = {"REAL_TOPIC": "T", "DUE_TIME": "1000", "REAL_QID": "2", "U": "u"}
    kept = [headers[0], headers[2], headers[3]]
    core = compiled_core()
    assert core.plain_release(headers, None, 500, 1000) == (1000, properties, "T", 2, kept)
    assert core.plain_release(headers, None, 500, 999) == (1000, properties, "T", 2, None)
    assert core.plain_release([*headers, ("TIMER_DELIVER_MS", b"5")], None, 500, 1000) is None


#: A parked record of a run: mostly the common case (due or not, to an accepted topic or
#: not, recalled or not, to any queue or one), and now and then any other parked headers.
RUN_HEADERS = st.fixed_dictionaries(
    {
        props.DUE_TIME: OFFSETS.map(lambda d: str(FORWARD_NOW + d // 10)),
        props.REAL_TOPIC: st.sampled_from(["T", "U", ""]),
    },
    optional={props.REAL_QID: st.sampled_from(["0", "3", "-1", "x"]), props.UNIQ_KEY: TEXT},
).map(lambda p: [(name, value.encode("utf-8", "surrogatepass")) for name, value in p.items()])
STAMPS = st.tuples(st.sampled_from([TIMESTAMP_LOG_APPEND_TIME, 1]), APPEND_MS.map(lambda a: a or 0))
HELD = st.builds(
    lambda headers, stamp, value, key, size: (
        Message(topic="ns.rmq.delay.1s", value=value, key=key, headers=headers, timestamp=stamp),
        headers,
        size,
    ),
    st.one_of(RUN_HEADERS, RUN_HEADERS, RUN_HEADERS, PARKED_HEADERS),
    STAMPS,
    st.none() | st.binary(max_size=3),
    st.none() | st.binary(max_size=2),
    st.integers(0, 2**40),
)
#: Which produce call raises (None: none does), and what.
REFUSALS = st.none() | st.tuples(
    st.integers(0, 4), st.sampled_from([BufferError, KafkaException, ValueError])
)


class _Ticks:
    """A clock that moves ``step`` ms at each reading."""

    def __init__(self, start: int, step: int) -> None:
        self.now, self.step = start, step

    def __call__(self) -> int:
        self.now += self.step
        return self.now


def _run(kernel: Any, held: list[Any], refusal: Any, **given: Any) -> tuple[Any, ...]:
    """What ``kernel`` (a forward_run) did: its result, the records left, every call."""
    records, produced, late = deque(held), [], []
    traced: list[Any] | None = [] if given["tracing"] else None

    def produce(*args: Any, **options: Any) -> None:
        if refusal is not None and refusal[0] == len(produced):
            produced.append(("refused", args, options))
            raise refusal[1]("refused")
        produced.append((args, options))

    def start(*args: Any) -> tuple[Any, ...]:
        return ("callback", *args)

    clock, trace_clock = _Ticks(FORWARD_NOW, given["step"]), _Ticks(7, 1)
    outcome = _result(
        kernel, records, given["accepted"], given["delay"], clock, given["recalled"], start,
        produce, late, traced, trace_clock, given["limit"],
    )  # fmt: skip
    return outcome, list(records), produced, late, traced, clock.now, trace_clock.now


@settings(max_examples=300)
@given(
    st.lists(HELD, max_size=6),
    st.dictionaries(st.sampled_from(["T", "U"]), st.sampled_from(["ns.T", "ns.U"])),
    st.dictionaries(TEXT, st.just(0), max_size=2),
    DELAYS,
    st.integers(0, 3),
    st.integers(0, 7),
    st.booleans(),
    REFUSALS,
)
def test_a_run_of_forwards_is_the_same_compiled_and_pure(
    held: list[Any],
    accepted: dict[str, str],
    recalled: dict[str, int],
    delay: int,
    step: int,
    limit: int,
    tracing: bool,
    refusal: Any,
) -> None:
    given_ = {"accepted": accepted, "recalled": recalled, "delay": delay, "step": step,
              "limit": limit, "tracing": tracing}  # fmt: skip
    pure = _run(run.forward_run, held, refusal, **given_)
    assert _run(compiled_core().forward_run, held, refusal, **given_) == pure


def test_a_run_forwards_the_common_case_and_stops_where_the_general_path_decides() -> None:
    """Each stop of a run, in both: not due, an unaccepted topic, a recalled id, a refused
    produce, the limit; what it forwarded is produced, timed, traced and taken off."""
    due = FORWARD_NOW - 5

    def held(topic: str, appended: int = FORWARD_NOW - 1000, uniq: str = "id") -> Any:
        properties = {"UNIQ_KEY": uniq, "REAL_TOPIC": topic, "DUE_TIME": str(due)}
        headers = [(name, value.encode()) for name, value in properties.items()]
        stamp = (TIMESTAMP_LOG_APPEND_TIME, appended)
        return Message(topic="l", value=b"v", headers=headers, timestamp=stamp), headers, 10

    first, second = held("T"), held("T")
    not_due, not_accepted, recalled = (
        held("T", appended=FORWARD_NOW),
        held("U"),
        held("T", uniq="gone"),
    )
    kept = first[1][:2]  # DUE_TIME stripped
    properties = {"UNIQ_KEY": "id", "REAL_TOPIC": "T", "DUE_TIME": str(due)}
    given_ = {"accepted": {"T": "ns.T"}, "recalled": {"gone": 0}, "delay": 1000, "step": 0,
              "limit": 9, "tracing": True}  # fmt: skip
    for kernel in (run.forward_run, compiled_core().forward_run):
        for stop in (not_due, not_accepted, recalled):
            outcome, left, produced, late, traced, *_ = _run(
                kernel, [first, second, stop], None, **given_
            )
            assert (outcome, left, late) == (("value", (2, 20)), [stop], [0.005, 0.005])
            callback = ("callback", first[0], "ns.T", b"v", None, kept, -1)
            assert produced[0] == (("ns.T", b"v", None, -1, callback, None, 0, kept), {})
            assert traced == [(8, first[0], properties, due), (9, second[0], properties, due)]
        refused = _run(kernel, [first, second], (1, BufferError), **given_)
        assert refused[:2] == (("value", (1, 10)), [second])
        limited = _run(kernel, [first, second], None, **{**given_, "limit": 1})
        assert limited[:2] == (("value", (1, 10)), [second])


def test_a_run_reads_the_default_wall_clock_as_the_clock_function_does() -> None:
    """The core reads ``epoch_ms`` itself: its readings fall between the function's."""
    due = clock.epoch_ms() - 5_000
    headers = [("REAL_TOPIC", b"T"), ("DUE_TIME", str(due).encode())]
    held = [(Message(topic="l", value=b"v", headers=headers), headers, 1)] * 3
    for kernel in (run.forward_run, compiled_core().forward_run):
        late: list[float] = []
        traced: list[Any] = []
        before = clock.epoch_ms()
        kernel(deque(held), {"T": "ns.T"}, 1000, clock.epoch_ms, {}, lambda *_: None,
               lambda *_, **__: None, late, traced, clock.epoch_ms, 9)  # fmt: skip
        after = clock.epoch_ms()
        assert [before <= at <= after for at, *_ in traced] == [True] * 3
        assert [(before - due) / 1000 <= s <= (after - due) / 1000 for s in late] == [True] * 3


def test_well_formed_headers_are_decoded_by_the_core_itself() -> None:
    """The core takes the common case itself (None would send it to the Python codec)."""
    core = compiled_core()
    headers = [("UNIQ_KEY", b"id-1"), ("TAGS", "ü".encode())]
    assert core.decode_headers(headers) == {"UNIQ_KEY": "id-1", "TAGS": "ü"}
    for odd in ([("a", None)], [("a", b"\xff")], [("a", b"1"), ("a", b"2")], (("a", b"1"),)):
        assert core.decode_headers(odd) is None


def _implementation(env: dict[str, str]) -> str:
    code = (
        "from rmqcompat import core, wire; print(core.implementation(), wire._decode_well_formed)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


#: What a consumed record's headers can be: None, or (name, bytes or None) pairs.
CONSUMED_HEADERS = st.none() | st.lists(
    st.tuples(st.text(max_size=6), st.binary(max_size=9) | st.none()), max_size=6
)


@given(st.binary(max_size=9) | st.none(), st.binary(max_size=4) | st.none(), CONSUMED_HEADERS)
def test_a_held_records_size_is_the_same_compiled_and_pure(
    value: bytes | None, key: bytes | None, headers: list[tuple[str, bytes | None]] | None
) -> None:
    msg = Message(topic="t", partition=0, offset=0, value=value, key=key, headers=headers)
    read = msg.headers()
    assert compiled_core().record_size(msg, read) == holding.record_size(msg, read)


class _Encodes:
    """Not a ``str``, but has the ``encode`` both paths call."""

    def encode(self, encoding: str) -> bytes:
        return f"encoded as {encoding}".encode()


class _OwnEncoding(str):
    """A ``str`` whose ``encode`` both paths must call (not the fast path's UTF-8)."""

    __slots__ = ()

    def encode(self, encoding: str = "utf-8", errors: str = "strict") -> bytes:
        return b"own:" + str.encode(self, encoding, errors)


PROPERTY_VALUES = (
    st.text(max_size=8)  # lone surrogates included: not UTF-8 encodable
    | st.integers()
    | st.binary(max_size=3)
    | st.none()
    | st.builds(_Encodes)
    | st.text(max_size=3).map(_OwnEncoding)
)
PROPERTY_MAPS = st.dictionaries(st.text(max_size=6), PROPERTY_VALUES, max_size=6)


@given(PROPERTY_MAPS | PROPERTY_MAPS.map(types.MappingProxyType))
def test_properties_are_encoded_as_headers_the_same_compiled_and_pure(properties: Any) -> None:
    core = compiled_core()
    assert _result(core.to_headers, properties) == _result(props.encode_properties, properties)


def test_the_core_encodes_properties_itself() -> None:
    """Not the pure function behind a compiled name: the bytes come out of the core."""
    core = compiled_core()
    assert core.to_headers is not props.encode_properties
    assert core.to_headers({"KEYS": "k\u00e9", "TAGS": _OwnEncoding("t")}) == [
        ("KEYS", b"k\xc3\xa9"),
        ("TAGS", b"own:t"),
    ]


def test_the_environment_variable_forces_the_pure_path() -> None:
    compiled_core()
    env = {k: v for k, v in os.environ.items() if k != PURE_PYTHON_ENV}
    assert _implementation(env).startswith("compiled core <built-in function decode_headers>")
    forced = _implementation({**env, PURE_PYTHON_ENV: "1"})
    assert forced.startswith(f"pure Python ({PURE_PYTHON_ENV} is set) <function decode_well_formed")


PREFIXES = st.text("0123456789ABCDEF", min_size=16, max_size=16) | st.text(max_size=17)
COUNTERS = st.integers(-(2**100), 2**100) | st.sampled_from([0, 2**32 - 3, 2**32 - 1, 2**32])


def _id_parts(ids: list[str], before: int, after: int) -> list[tuple[str, int]]:
    """Each id as (prefix, counter), once its seconds are checked to lie in the window."""
    parts = []
    for msg_id in ids:
        assert len(msg_id) == 32
        assert before & 0xFFFFFFFF <= int(msg_id[16:24], 16) <= after & 0xFFFFFFFF
        parts.append((msg_id[:16], int(msg_id[24:], 16)))
    return parts


def _ids_taken(kind: Any, prefix: str, start: Any, counts: list[int]) -> tuple[Any, ...]:
    before = int(time.time())
    try:
        ids = kind(prefix, start)
        taken = [ids.next_id()]
        for count in counts:
            taken += ids.next_ids(count)
        ids.reset("0123456789ABCDEF", 7)
        taken.append(ids.next_id())
    except Exception as exc:  # the exception's type is the outcome compared
        return ("raised", type(exc))
    return ("value", _id_parts(taken, before, int(time.time())))


#: Counts of ids to take: small ones, and refused ones (a valid count near 2**32 would
#: make billions of ids).
COUNTS = st.integers(-3, 40) | st.integers(-(2**100), -1) | st.integers(2**32, 2**100)


@given(PREFIXES, COUNTERS, st.lists(COUNTS, max_size=3))
def test_message_ids_are_the_same_compiled_and_pure(
    prefix: str, start: int, counts: list[int]
) -> None:
    compiled = _ids_taken(compiled_core().MessageIds, prefix, start, counts)
    assert compiled == _ids_taken(message_id.MessageIds, prefix, start, counts)


def test_message_ids_name_what_is_refused_compiled_and_pure() -> None:
    for kind in (compiled_core().MessageIds, message_id.MessageIds):
        with pytest.raises(ValueError, match="16 upper-case hex digits"):
            kind("0123456789abcdef")
        with pytest.raises(ValueError, match=r"starts in \[0, 2\*\*32\), not -1"):
            kind("0123456789ABCDEF", -1)
        ids = kind("0123456789ABCDEF", 2**32 - 1)
        with pytest.raises(ValueError, match="count must be >= 0, not -2"):
            ids.next_ids(-2)
        assert [msg_id[24:] for msg_id in ids.next_ids(2)] == ["FFFFFFFF", "00000000"]


def _fields(msg: MessageExt) -> dict[str, Any]:
    """Every field of ``msg``, read one by one (a slot the core left unset would raise)."""
    return {field.name: getattr(msg, field.name) for field in dataclasses.fields(msg)}


def _plain_decoded(kernel: Any, record: Any, partition: int, offset: int) -> Any:
    """What ``kernel`` (``plain_decode``) makes of ``record``: None, the message's
    attributes and class, or the exception's type."""
    try:
        msg = kernel(record, "ns.rmq.retry.G", "%RETRY%G", partition, offset)
    except Exception as exc:  # the exception's type is the outcome compared
        return type(exc)
    return None if msg is None else (type(msg), _fields(msg))


@settings(max_examples=300)
@given(
    RECORDS,
    st.integers(min_value=0, max_value=2**31) | st.just(2**70),
    st.integers(min_value=0, max_value=2**63) | st.just(2**70),
)
def test_decoding_a_record_is_the_same_compiled_and_pure(
    record: Any, partition: int, offset: int
) -> None:
    consumed = Message(
        topic="ns.rmq.retry.G",
        partition=record.partition_,
        offset=record.offset_,
        value=record.value_,
        key=record.key_,
        headers=record.headers_,
        timestamp=record.timestamp_,
    )
    for source in (record, consumed):  # a Python record, and confluent's own
        compiled = _plain_decoded(compiled_core().plain_decode, source, partition, offset)
        assert compiled == _plain_decoded(wire.plain_decode, source, partition, offset)


#: Headers of fetched records: every property a CONSUME event reads, repeated, not UTF-8,
#: numbers at and beyond their bounds, and others.
FETCHED_HEADERS = st.lists(
    st.tuples(
        st.sampled_from([props.ORIGIN_MESSAGE_ID, props.KEYS, props.TAGS, props.UNIQ_KEY]),
        st.sampled_from([b"", b"k1 k2", "标签".encode(), b"\xff"]) | st.binary(max_size=4),
    )
    | st.tuples(NUMBERED, NUMBER_TEXTS.map(str.encode) | st.none())
    | st.tuples(st.text(max_size=3), st.binary(max_size=3) | st.none()),
    max_size=6,
)


@settings(max_examples=300)
@given(
    FETCHED_HEADERS,
    st.integers(min_value=0, max_value=2**31 - 1),
    st.integers(min_value=0, max_value=2**63 - 1),
    st.integers(min_value=-1, max_value=2**62),
    st.integers(min_value=0, max_value=2**40),
)
def test_a_fetched_records_kept_consume_event_is_the_reference_event_of_its_message(
    headers: list[tuple[str, bytes | None]], partition: int, offset: int, at: int, took_ms: int
) -> None:
    """The fields the direct fetch keeps for a record, and the event settlement and packing
    make of them, are the pure encoder's CONSUME event of the message ``plain_decode``
    builds from the record, wherever it builds one."""
    record = FakeRecord(topic_="ns.T", headers_=headers, timestamp_=(1, at))
    try:
        names = [(name.encode(), value) for name, value in headers]
    except UnicodeEncodeError:  # a fetched header's name is bytes: never a lone surrogate
        return
    msg = wire.plain_decode(record, "ns.T", "T", partition, offset)
    who, at_ms = bulk.identity("c", "h", "ns"), 1_700_000_000_000
    head = bulk.consume_head(who, at_ms, "G")
    kept = compiled_core().kept_consume_event(
        head, bulk.SUCCESS, "T", took_ms, "ns.T", partition, offset, at, names
    )
    if msg is not None:
        call = ([msg], (), took_ms, "RECONSUME_LATER", None)
        with mock.patch.object(bulk, "_consume_calls", bulk.consume_calls):  # pure Python
            (reference,) = bulk.consumed_calls(who, at_ms, "G", [call])
        assert kept == reference


#: The ``RETRY_TOPIC`` values a retry topic's intake checked (None: not a retry topic).
_CHECKED = st.sampled_from([None, {}, {"Orders": "Orders"}, {"Orders": "O", "Other": "Other"}])
#: How a record of a generated run differs from the run's partition, if it does.
_RUN_BREAKS = st.sampled_from(["same"] * 6 + ["other partition", "other topic", "error"])


@settings(max_examples=300)
@given(
    st.lists(st.tuples(RECORDS, _RUN_BREAKS, st.integers(0, 2)), max_size=8),
    st.integers(0, 3),
    _CHECKED,
)
def test_taking_a_run_of_records_is_the_same_compiled_and_pure(
    items: list[tuple[Any, str, int]], start: int, checked: dict[str, str] | None
) -> None:
    records, offset = [], 10
    for fake, kind, step in items:
        offset += step  # repeated offsets too: a run may carry one twice
        fields: dict[str, Any] = {
            "topic": "ns.T" if kind == "other topic" else "ns.rmq.retry.G",
            "partition": 1 if kind == "other partition" else 0,
            "offset": offset,
            "value": fake.value_,
            "key": fake.key_,
            "headers": fake.headers_,
            "timestamp": fake.timestamp_,
        }
        if kind == "error":
            fields["error"] = KafkaError(KafkaError._PARTITION_EOF)
        records.append(Message(**fields))
    core, where = compiled_core(), ("ns.rmq.retry.G", "%RETRY%G", 0)
    outcomes = []
    for take, pq in (
        (intake.accept_run, ProcessQueue()),
        (core.accept_run, core.ProcessQueue()),
        (core.accept_run, ProcessQueue()),  # the core's run takes either queue
    ):
        out: list[MessageExt] = []
        given = list(records)  # the run takes what it accepts out of the list
        end = take(given, start, where, pq, out, checked)
        taken = [(type(m), _fields(m)) for m in out]
        left = [i for i, record in enumerate(given) if record is None]
        outcomes.append((end, taken, left, pq.count, pq.size_bytes, pq.highest_seen, pq.first()))
        assert left == list(range(start, end))
    assert outcomes[1] == outcomes[0]
    assert outcomes[2] == outcomes[0]


def test_the_core_builds_the_same_message_the_class_does() -> None:
    """The core sets the slotted dataclass's slots itself: the message is a MessageExt like
    any other (equal, every field set, weakly referable, no attribute beyond its fields)."""
    headers = [("UNIQ_KEY", b"ABC"), ("RECONSUME_TIME", b"3")]
    record = Message(topic="t", partition=2, offset=41, value=b"v", key=b"k", headers=headers)
    built = compiled_core().plain_decode(record, "t", "T", 2, 41)
    called = MessageExt(
        "T", b"v", "ABC", 2, 41, -1, -1, 3, {"UNIQ_KEY": "ABC", "RECONSUME_TIME": "3"}, b"k"
    )
    called.born_timestamp = called.store_timestamp = built.store_timestamp
    assert type(built) is MessageExt
    assert _fields(built) == _fields(called)
    assert built == called
    assert weakref.ref(built)() is built
    with pytest.raises(AttributeError):
        built.extra = 1  # type: ignore[attr-defined]


def test_the_core_decodes_a_plain_record_itself() -> None:
    """The core takes the common case itself (None would send it down the general path)."""
    headers = [("UNIQ_KEY", b"ABC"), ("BORN_TIMESTAMP", b"9223372036854775807"), ("T", b"u")]
    record = Message(topic="t", partition=2, offset=41, value=b"v", headers=headers)
    core = compiled_core()
    decoded = core.plain_decode(record, "t", "T", 2, 41)
    assert isinstance(decoded, MessageExt)
    assert (decoded.topic, decoded.msg_id, decoded.born_timestamp) == ("T", "ABC", 2**63 - 1)
    assert decoded.properties == {"UNIQ_KEY": "ABC", "BORN_TIMESTAMP": str(2**63 - 1), "T": "u"}
    no_id = core.plain_decode(Message(topic="t", partition=2, offset=41), "t", "T", 2, 41)
    assert no_id is not None and no_id.msg_id == "t@2@41"
    for odd in ([("RECONSUME_TIME", b"2147483648")], [("FLAG", b"-1")], [("a", b"\xff")]):
        assert core.plain_decode(Message(topic="t", headers=odd), "t", "T", 2, 41) is None


def test_the_core_calls_a_records_own_accessors_unless_it_is_exactly_confluents() -> None:
    """The core calls confluent's accessors directly on a ``Message`` (native/src/record.rs),
    and by name on anything else: a subclass's override is what it reads."""

    class Overriding(Message):
        def value(self) -> bytes:
            return b"overridden"

    record = {"topic": "t", "partition": 2, "offset": 41, "value": b"v"}
    core = compiled_core()
    assert core.plain_decode(Message(**record), "t", "T", 2, 41).body == b"v"
    assert core.plain_decode(Overriding(**record), "t", "T", 2, 41).body == b"overridden"


SEND_BACK_NAMES = st.sampled_from(
    [
        props.RETRY_TOPIC,
        props.ORIGIN_MESSAGE_ID,
        props.UNIQ_KEY,
        props.BORN_TIMESTAMP,
        props.RECONSUME_TIME,
        props.MAX_RECONSUME_TIMES,
        *props.TRANSIENT,
        props.TAGS,
        "user",
    ]
) | st.text(max_size=4)
SEND_BACK_VALUES = (
    st.text(max_size=6)
    | st.text(max_size=3).map(_OwnEncoding)
    | st.integers()  # a listener's wrong type: no encode
    | st.none()
)
#: A table with a level of delay 0 (sent straight to its real topic, not parked).
_SEND_BACK_LEVELS = DelayLevels.parse("1s 0s 5s 10s 1m 2h")


@given(
    st.dictionaries(SEND_BACK_NAMES, SEND_BACK_VALUES, max_size=8),
    st.text(max_size=6) | st.none(),
    st.integers(-(2**40), 2**70) | st.booleans(),
    st.integers(-(2**40), 2**64) | st.none(),
    st.integers(1, _SEND_BACK_LEVELS.max_level),
    st.integers(0, 2**45),
    st.sampled_from(["Orders", "%RETRY%G"]),
)
def test_a_send_back_record_is_the_same_compiled_and_pure(
    properties: dict[str, Any],
    msg_id: str | None,
    stored: int,
    born: int | None,
    level: int,
    now_ms: int,
    topic: str,
) -> None:
    msg = MessageExt(topic, b"body", msg_id, 0, 7, born, 0, 3, properties, b"k")  # type: ignore[arg-type]
    args = (msg, stored, "%RETRY%G", level, _SEND_BACK_LEVELS, "ns", now_ms)
    pure = _send_back_record(None, *args)
    compiled = _send_back_record(compiled_core(), *args)
    assert compiled == pure
    assert msg.properties == properties  # neither changes the message
    if pure[0] == "value":  # where it parks is what the record says, as written
        record, parked_at = pure[1]
        assert parked_at == (parking.stamped_due(record.headers), from_kafka_topic(record.topic)[1])


def _send_back_record(core: Any, msg: MessageExt, stored: int, *args: Any) -> tuple[Any, ...]:
    """``send_back_record`` with ``core`` (None: pure), also where the suite runs pure, to
    the target of ``args`` (real topic, level, levels, namespace, then the time)."""
    *where, now_ms = args
    target = sendback_record.SendBackTarget.of(*where)
    with mock.patch.object(sendback_record, "CORE", core):
        return _result(sendback_record.send_back_record, msg, stored, target, now_ms)


def test_the_core_builds_a_send_back_s_headers_itself() -> None:
    """The headers of a parked send-back come out of the core, in park's order."""
    properties = {props.TAGS: "a", props.CONSUME_START_TIME: "5", props.RECONSUME_TIME: "0"}
    msg = MessageExt("Orders", b"b", "ID", 0, 7, 1_000, 0, 0, properties)
    headers = compiled_core().send_back_headers(msg, 0, "%RETRY%G", 3, 11_000)
    assert headers == [
        (props.TAGS, b"a"),
        (props.RECONSUME_TIME, b"1"),
        (props.RETRY_TOPIC, b"Orders"),
        (props.ORIGIN_MESSAGE_ID, b"ID"),
        (props.UNIQ_KEY, b"ID"),
        (props.BORN_TIMESTAMP, b"1000"),
        (props.REAL_TOPIC, b"%RETRY%G"),
        (props.REAL_QID, b"-1"),
        (props.DELAY, b"3"),
        (props.DUE_TIME, b"11000"),
    ]


def _called_back(make: Any, first: list[Any], more: list[Any]) -> tuple[Any, ...]:
    """What a callback ``make`` binds to a function that returns its arguments (or raises
    for a first argument of ``"raise"``) gives when called with ``more``."""

    def func(*args: Any) -> tuple[Any, ...]:
        if args and args[0] == "raise":
            raise LookupError(args)
        return args

    return _result(make(func, *first), *more)


#: A callback's first arguments ("raise" makes its function raise) and the rest.
_BOUND = st.lists(st.integers() | st.sampled_from(["raise", "x"]) | st.none(), max_size=6)
_MORE = st.lists(st.none() | st.integers(), max_size=3)


@given(_BOUND, _MORE)
def test_a_bound_call_is_the_same_compiled_and_pure(first: list[Any], more: list[Any]) -> None:
    compiled = _called_back(compiled_core().bound_call, first, more)
    assert compiled == _called_back(callbacks.bound_call, first, more)


def test_a_compiled_bound_call_is_out_of_the_collectors_sight() -> None:
    held = [object()]
    call = compiled_core().bound_call(list.append, held)
    assert not gc.is_tracked(call)
    call(1)
    assert held[1:] == [1]
    assert gc.is_tracked(callbacks.bound_call(list.append, held))  # the reference is seen
