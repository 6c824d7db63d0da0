"""The hot paths' events encoded in bulk are byte for byte the codec's encoding of the
event the Emitter builds from the same values."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rmqcompat import properties as props
from rmqcompat.message import Message, MessageExt
from rmqcompat.trace import Emitter, bulk, decode, encode

_EMITTER = Emitter("host@1@G", "ns", lambda: 1_700_000_000_123, host="hé")
_TEXT = st.text(max_size=40)
_OPTIONAL = st.none() | _TEXT
_INT = st.integers(-(2**31), 2**31 - 1)
_LONG = st.integers(-(2**63), 2**63 - 1)
_TOPIC = st.from_regex(r"[a-zA-Z0-9_-]{1,20}", fullmatch=True)


@st.composite
def _received(draw: st.DrawFn) -> MessageExt:
    properties = {
        name: value
        for name in (props.TAGS, props.KEYS, props.ORIGIN_MESSAGE_ID)
        if (value := draw(_OPTIONAL)) is not None
    }
    return MessageExt(
        draw(_TEXT),
        b"",
        draw(_TEXT),
        draw(_INT),
        draw(_LONG),
        draw(_LONG),
        0,
        draw(_INT),
        properties,
    )


@given(
    st.lists(_received(), max_size=5),
    st.sets(st.integers(0, 4)),
    st.sampled_from(["RECONSUME_LATER", "EXCEPTION", "TIME_OUT"]),
    _LONG,
)
def test_consumed_are_the_emitters_consume_events(
    msgs: list[MessageExt], failed: set[int], late: str, took: int
) -> None:
    at = _EMITTER.clock()
    encoded = bulk.consumed_calls(_EMITTER.who, at, "G", [(msgs, failed, took, late, None)])
    expected = [
        encode(_EMITTER.consume(msg, "G", late if i in failed else "SUCCESS", took))  # type: ignore[arg-type]
        for i, msg in enumerate(msgs)
    ]
    assert list(encoded) == expected


@given(
    st.lists(
        st.tuples(
            st.lists(_received(), max_size=3),
            st.sets(st.integers(0, 2)),
            _LONG,
            st.sampled_from(["RECONSUME_LATER", "EXCEPTION", "TIME_OUT"]),
        ),
        max_size=4,
    )
)
def test_consumed_calls_are_each_calls_consume_events_in_order(
    calls: list[tuple[list[MessageExt], set[int], int, str]],
) -> None:
    at = _EMITTER.clock()
    encoded = bulk.consumed_calls(_EMITTER.who, at, "G", [(*c, None) for c in calls])
    expected = [
        encode(_EMITTER.consume(msg, "G", late if i in failed else "SUCCESS", took))  # type: ignore[arg-type]
        for msgs, failed, took, late in calls
        for i, msg in enumerate(msgs)
    ]
    assert list(encoded) == expected


def test_consumed_keeps_the_counts_taken_when_the_call_ended() -> None:
    msg = MessageExt("Orders", b"", "ID", 0, 5, 1, 1, 2, {})
    encoded = bulk.consumed_calls(_EMITTER.who, 1, "G", [([msg], {0}, 3, "RECONSUME_LATER", [2])])
    msg.reconsume_times += 1  # its send-back failed after the call
    assert decode(encoded[0])["reconsume_times"] == 2


@given(
    _TOPIC,
    st.none() | _TOPIC,
    st.lists(_TOPIC, max_size=3),
    st.integers(0, 18),
    st.none() | st.integers(0, 2**62),
    st.none() | _LONG,
    st.integers(0, 2**40),
)
def test_published_is_the_emitters_publish_event(
    topic: str,
    tags: str | None,
    keys: list[str],
    level: int,
    deliver_at: int | None,
    born: int | None,
    due: int,
) -> None:
    message = Message(topic, b"x", tags=tags, keys=keys, delay_time_level=level)
    message.deliver_time_ms = deliver_at
    headers = [(props.DUE_TIME, str(due).encode())]
    encoded = bulk.published(_EMITTER.who, [(7, message, "ID", "ns.phys", born, headers)])
    due_ms = deliver_at if deliver_at is not None else (due if level else None)
    expected = dict(
        _EMITTER.publish(
            "ID",
            topic,
            "ns.phys",
            tags=tags,
            keys=props.join_keys(keys),
            born_ms=born,
            delay_level=level or None,
            due_ms=due_ms,
        ),
        timestamp_ms=7,
    )
    assert list(encoded) == [encode(expected)]


def _parked(partition: int, offset: int) -> SimpleNamespace:
    """The part of a parked record :func:`bulk.forwarded` reads."""
    return SimpleNamespace(
        topic=lambda: "ns.rmq.delay.1s", partition=lambda: partition, offset=lambda: offset
    )


def _avro_int(text: str) -> int | None:
    """The trace's reading of a numeric property: ASCII decimal within an Avro int."""
    if not re.fullmatch(r"-?[0-9]{1,10}", text):
        return None
    return int(text) if -(2**31) <= int(text) < 2**31 else None


@given(
    st.dictionaries(
        st.sampled_from(
            [
                props.UNIQ_KEY,
                props.REAL_TOPIC,
                props.RETRY_TOPIC,
                props.ORIGIN_MESSAGE_ID,
                props.RECONSUME_TIME,
                props.DELAY,
            ]
        ),
        _TEXT | st.integers(-5, 2**20).map(str) | st.sampled_from(["2147483648", "²", "--1"]),
    ),
    st.integers(0, 2**20),
    st.integers(0, 2**62),
    _LONG,
)
def test_forwarded_is_the_emitters_forward_event(
    properties: dict[str, str], partition: int, offset: int, due: int
) -> None:
    encoded = bulk.forwarded(_EMITTER.who, [(9, _parked(partition, offset), properties, due)])  # type: ignore[list-item]
    event = decode(encoded[0])
    real = properties.get(props.REAL_TOPIC, "")
    assert (event["topic"], event["target_topic"]) == (
        properties.get(props.RETRY_TOPIC, real),
        real,
    )
    assert event["msg_id"] == properties.get(props.UNIQ_KEY) or event["msg_id"].startswith("ns.rmq")
    number = lambda name: _avro_int(properties.get(name, ""))  # noqa: E731
    expected = dict(
        _EMITTER.forward(
            event["msg_id"],
            event["topic"],
            real,
            "ns.rmq.delay.1s",
            partition,
            offset,
            due,
            reconsume_times=number(props.RECONSUME_TIME),
            delay_level=number(props.DELAY),
            origin_msg_id=properties.get(props.ORIGIN_MESSAGE_ID),
        ),
        timestamp_ms=9,
    )
    assert list(encoded) == [encode(expected)]


@given(_received(), _INT, st.integers(0, 18), st.none() | _LONG, _TEXT)
def test_sent_back_is_the_emitters_send_back_event(
    msg: MessageExt, stored: int, level: int, due: int | None, target: str
) -> None:
    encoded = bulk.sent_back(_EMITTER.who, "G", [(7, msg, stored, level, due, target)])
    expected = dict(
        _EMITTER.send_back(msg, "G", level, due, target), timestamp_ms=7, reconsume_times=stored
    )
    assert list(encoded) == [encode(expected)]


@given(st.lists(st.tuples(_TEXT, _TEXT, _TEXT, _OPTIONAL), max_size=5), _TEXT)
def test_replayed_are_the_emitters_replay_events(
    letters: list[tuple[str, str, str, str | None]], command: str
) -> None:
    encoded = bulk.replayed(_EMITTER.who, 11, "G", letters, command)
    expected = [
        encode(
            dict(_EMITTER.replay(m, "G", t, to, origin_msg_id=o, reason=command), timestamp_ms=11)
        )
        for m, t, to, o in letters
    ]
    assert list(encoded) == expected


def test_a_count_outside_an_avro_int_is_refused_not_written() -> None:
    msg = MessageExt("Orders", b"", "ID", 0, 5, 1, 1, 2**31, {})
    with pytest.raises(OverflowError):
        bulk.consumed_calls(_EMITTER.who, 1, "G", [([msg], (), 3, "RECONSUME_LATER", None)])
