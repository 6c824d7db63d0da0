"""Properties <-> Kafka headers: one codec, RocketMQ names, UTF-8 values (SEMANTICS 11)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rmqcompat import properties as props
from rmqcompat.errors import MalformedHeaderError

property_maps = st.dictionaries(st.text(min_size=1, max_size=30), st.text(max_size=200))


@given(properties=property_maps)
def test_headers_round_trip(properties: dict[str, str]) -> None:
    headers = props.to_headers(properties)
    assert all(isinstance(value, bytes) for _, value in headers)
    assert props.from_headers(headers) == properties


def test_headers_use_rocketmq_names_and_utf8_values() -> None:
    headers = props.to_headers({props.TAGS: "TagA", props.KEYS: "k1 k2", "user": "héllo"})
    assert headers == [("TAGS", b"TagA"), ("KEYS", b"k1 k2"), ("user", "héllo".encode())]


def test_rocketmq_property_names() -> None:
    names = {
        props.KEYS: "KEYS",
        props.TAGS: "TAGS",
        props.DELAY: "DELAY",
        props.RETRY_TOPIC: "RETRY_TOPIC",
        props.REAL_TOPIC: "REAL_TOPIC",
        props.REAL_QID: "REAL_QID",
        props.ORIGIN_MESSAGE_ID: "ORIGIN_MESSAGE_ID",
        props.RECONSUME_TIME: "RECONSUME_TIME",
        props.MAX_RECONSUME_TIMES: "MAX_RECONSUME_TIMES",
        props.UNIQ_KEY: "UNIQ_KEY",
        props.CONSUME_START_TIME: "CONSUME_START_TIME",
        props.TRAN_MSG: "TRAN_MSG",
        props.PGROUP: "PGROUP",
    }
    assert all(constant == name for constant, name in names.items())


def test_no_headers_means_no_properties() -> None:
    assert props.from_headers(None) == {}
    assert props.from_headers([]) == {}


@pytest.mark.parametrize(
    ("headers", "why"),
    [
        ([("TAGS", None)], "no value"),
        ([("TAGS", b"\xff\xfe")], "UTF-8"),
        ([("TAGS", b"a"), ("TAGS", b"a")], "more than once"),
        ([("TAGS", b"a"), ("KEYS", b"k"), ("TAGS", b"b")], "more than once"),
    ],
)
def test_malformed_headers_raise_a_typed_error(
    headers: list[tuple[str, bytes | None]], why: str
) -> None:
    with pytest.raises(MalformedHeaderError, match=why):
        props.from_headers(headers)


def test_malformed_header_error_names_the_header() -> None:
    with pytest.raises(MalformedHeaderError, match="RECONSUME_TIME"):
        props.from_headers([("RECONSUME_TIME", None)])


@given(value=st.integers(min_value=-(2**63), max_value=2**63))
def test_integers_round_trip_as_decimal_text(value: int) -> None:
    text = props.encode_int(value)
    assert text == str(value)
    assert props.decode_int({"N": text}, "N") == value


@pytest.mark.parametrize(
    "text", ["", "abc", "1.5", "0x10", "1e3", "1_000", " 7", "7 ", "+ 7", "\u0663"]
)
def test_non_integer_numbers_raise(text: str) -> None:
    with pytest.raises(MalformedHeaderError, match="N"):
        props.decode_int({"N": text}, "N")


def test_missing_number_uses_default_or_raises() -> None:
    assert props.decode_int({}, "N", 5) == 5
    assert props.decode_int({}, "N", 0) == 0
    with pytest.raises(MalformedHeaderError, match="missing"):
        props.decode_int({}, "N")


def test_keys_are_joined_with_a_space() -> None:
    assert props.join_keys(["a", "b", "c"]) == "a b c"
    assert props.join_keys("single") == "single"
    assert props.join_keys(None) is None


def _clamped_reference(text: str, low: int, high: int) -> int | None:
    """decode_clamped's rule written plainly: ASCII decimal only, clamped; None = error."""
    body = text[1:] if text[:1] in "+-" else text
    if not body or not all("0" <= c <= "9" for c in body):
        return None
    return min(max(int(text), low), high)


@given(
    text=st.one_of(
        st.integers(min_value=-(2**70), max_value=2**70).map(str),
        st.text(alphabet="+-0123456789\u0663\u00b2\uff11 _.", max_size=25),
    )
)
def test_clamped_numbers_follow_the_plain_rule(text: str) -> None:
    low, high = -5, 2**63 - 1
    expected = _clamped_reference(text, low, high)
    if expected is None:
        with pytest.raises(MalformedHeaderError, match="N"):
            props.decode_clamped({"N": text}, "N", low, high, 0)
    else:
        assert props.decode_clamped({"N": text}, "N", low, high, 0)[0] == expected


@pytest.mark.parametrize("text", ["\u0663", "\u00b2", "\uff11\uff12", "1\u0663"])
def test_clamped_numbers_refuse_non_ascii_digits(text: str) -> None:
    with pytest.raises(MalformedHeaderError):
        props.decode_clamped({"N": text}, "N", 0, 10, 0)
