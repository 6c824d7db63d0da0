"""Consumed records for decoding tests: a plain data holder with the record's methods, and
generated ones with the headers decoding reads, well-formed and not."""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st

from rmqcompat import properties as props


@dataclass
class FakeRecord:
    """Implements the KafkaRecord protocol with fixed values."""

    topic_: str | None = "ns.OrderTopic"
    partition_: int | None = 2
    offset_: int | None = 41
    key_: bytes | None = b"shard"
    value_: bytes | None = b"payload"
    headers_: list[tuple[str, bytes | None]] | None = field(default_factory=list)
    timestamp_: tuple[int, int] = (1, 1_700_000_000_500)

    def topic(self) -> str | None:
        return self.topic_

    def partition(self) -> int | None:
        return self.partition_

    def offset(self) -> int | None:
        return self.offset_

    def key(self) -> bytes | None:
        return self.key_

    def value(self) -> bytes | None:
        return self.value_

    def headers(self) -> list[tuple[str, bytes | None]] | None:
        return self.headers_

    def timestamp(self) -> tuple[int, int]:
        return self.timestamp_


#: Numeric property texts at and beyond each bound decoding reads, and malformed ones.
NUMBER_TEXTS = st.sampled_from(
    [
        "0",
        "7",
        "007",
        "+7",
        "-1",
        "",
        " 7",
        "1_0",
        "\u0661",  # a non-ASCII digit (ARABIC-INDIC ONE)
        "2147483647",
        "2147483648",
        "-2147483648",
        "9223372036854775807",
        "9223372036854775808",
        "0000000000000000001",
        "00000000000000000001",
        "1" * 30,
    ]
) | st.integers(min_value=-(2**64), max_value=2**64).map(str)
NUMBERED = st.sampled_from([props.BORN_TIMESTAMP, props.RECONSUME_TIME, props.FLAG])
DECODED_HEADERS = st.none() | st.lists(
    st.tuples(NUMBERED, NUMBER_TEXTS.map(str.encode))
    | st.tuples(st.sampled_from([props.UNIQ_KEY, props.TAGS, "u"]), st.binary(max_size=6))
    | st.tuples(st.just(props.RETRY_TOPIC), st.sampled_from([b"Orders", b"Other", b""]))
    | st.tuples(st.text(max_size=4), st.binary(max_size=4) | st.none()),
    max_size=5,
)
RECORDS = st.builds(
    FakeRecord,
    value_=st.binary(max_size=4) | st.none(),
    key_=st.binary(max_size=4) | st.none(),
    headers_=DECODED_HEADERS,
    timestamp_=st.tuples(st.just(1), st.integers(min_value=-1, max_value=2**62)),
)
