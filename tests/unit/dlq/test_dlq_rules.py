"""Dead-letter rules without a broker: times, filters, the read model, replay records."""

from __future__ import annotations

import pytest

from rmqcompat import properties as props
from rmqcompat.dlq.errors import BadTimeError
from rmqcompat.dlq.filters import DeadLetterFilter, parse_future_time, parse_time
from rmqcompat.dlq.ledger import ledger_topic
from rmqcompat.dlq.model import DeadLetter
from rmqcompat.dlq.replay import ReplayOptions
from rmqcompat.dlq.republish import Target, replay_headers, replay_stamp, replay_topic
from rmqcompat.errors import ConfigError, InvalidMessageError
from rmqcompat.message import SYSTEM_PROPERTIES, Message
from rmqcompat.properties import REPLAY_ID, REPLAY_TIME
from rmqcompat.topics.naming import REPLAY_LOG_TOPIC, from_kafka_topic, to_kafka_topic

NOW = 1_800_000_000_000


def letter(offset: int = 7, dead_ms: int = NOW, **headers: str) -> DeadLetter:
    base = {
        props.UNIQ_KEY: "ID1",
        props.ORIGIN_MESSAGE_ID: "ID0",
        props.RETRY_TOPIC: "Orders",
        props.RECONSUME_TIME: "17",
        props.MAX_RECONSUME_TIMES: "16",
        props.TAGS: "TA",
        props.KEYS: "k1 k2",
        props.BORN_TIMESTAMP: "1000",
        "user": "u",
    }
    base.update(headers)
    raw = tuple((k, v.encode()) for k, v in base.items() if v != "-")
    return DeadLetter("G", "ns.rmq.dlq.G", 0, offset, dead_ms, b"body", b"key", raw)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("90s", NOW - 90_000),
        ("15m", NOW - 900_000),
        ("2h", NOW - 7_200_000),
        ("7d", NOW - 7 * 86_400_000),
        ("1w", NOW - 604_800_000),
        ("500ms", NOW - 500),
        ("2027-01-15T08:00:00Z", 1_800_000_000_000),
        ("2027-01-15T09:00:00+01:00", 1_800_000_000_000),
    ],
)
def test_parse_time_reads_ages_and_iso_times(text: str, expected: int) -> None:
    assert parse_time(text, NOW) == expected


def test_deliver_times_count_intervals_forward() -> None:
    assert parse_future_time("10m", NOW) == NOW + 600_000
    assert parse_future_time("1970-01-01T00:00:02Z", NOW) == 2000
    with pytest.raises(BadTimeError):
        parse_future_time("later", NOW)


def test_naive_iso_time_is_utc() -> None:
    assert parse_time("1970-01-01T00:00:01", NOW) == 1000


@pytest.mark.parametrize("text", ["", "2 hours", "-2h", "2x", "yesterday", "2026-13-01"])
def test_malformed_time_names_the_text_and_the_forms(text: str) -> None:
    with pytest.raises(BadTimeError, match="ISO 8601"):
        parse_time(text, NOW)


def test_filter_criteria_all_apply() -> None:
    dead = letter(dead_ms=NOW)
    assert DeadLetterFilter().matches(dead)
    assert DeadLetterFilter(since_ms=NOW, until_ms=NOW + 1).matches(dead)
    assert not DeadLetterFilter(since_ms=NOW + 1).matches(dead)
    assert not DeadLetterFilter(until_ms=NOW).matches(dead)  # until is exclusive
    assert DeadLetterFilter(keys=frozenset({"k2", "zz"})).matches(dead)
    assert not DeadLetterFilter(keys=frozenset({"k"})).matches(dead)
    assert not DeadLetterFilter(tags=frozenset({"TB"})).matches(dead)
    for wanted in ("ID1", "ID0", "ns.rmq.dlq.G@0@7"):
        assert DeadLetterFilter(msg_ids=frozenset({wanted})).matches(dead)
    assert not DeadLetterFilter(msg_ids=frozenset({"ID9"}), tags=frozenset({"TA"})).matches(dead)


def test_read_model_derives_fields_from_headers_and_tolerates_bad_ones() -> None:
    dead = letter()
    assert (dead.msg_id, dead.origin_msg_id, dead.original_topic) == ("ID1", "ID0", "Orders")
    assert (dead.tags, dead.keys, dead.reconsume_times, dead.born_ms) == (
        "TA",
        ("k1", "k2"),
        17,
        1000,
    )
    odd = letter(**{props.UNIQ_KEY: "-", props.RECONSUME_TIME: "x", props.BORN_TIMESTAMP: "-"})
    assert odd.msg_id == "ns.rmq.dlq.G@0@7" and odd.reconsume_times == 0 and odd.born_ms == NOW
    raw = DeadLetter("G", "t", 0, 0, NOW, b"", None, (("a", None), ("b", b"\xff")))
    assert raw.properties == {"a": "", "b": "\ufffd"}


def test_ledger_topic_is_a_fixed_internal_name_per_namespace() -> None:
    assert ledger_topic("") == "rmq.replay-log"
    assert ledger_topic("prod") == "prod.rmq.replay-log"
    assert from_kafka_topic("prod.rmq.replay-log") == ("prod", REPLAY_LOG_TOPIC)
    assert to_kafka_topic(REPLAY_LOG_TOPIC) != to_kafka_topic("RMQ_SYS_REPLAY_LOG2")


def _props(record_headers: list[tuple[str, bytes | None]]) -> dict[str, str]:
    return props.from_headers(record_headers)


def _record(dead: DeadLetter, target: Target, *, new_id: str = "NEW", replay_id: str = "r"):
    topic = replay_topic(dead, target)
    headers = replay_headers(dead, target, new_id, replay_id, replay_stamp(77))
    return to_kafka_topic(topic, "ns"), headers


def test_replay_to_retry_resets_the_count_names_the_replay_and_keeps_the_message() -> None:
    dead = letter(**{props.DUE_TIME: "9", props.REAL_TOPIC: "x", REPLAY_ID: "old"})
    topic, headers = _record(dead, "retry", replay_id="G/x")
    assert topic == "ns.rmq.retry.G"
    sent = _props(headers)
    assert sent[props.RECONSUME_TIME] == "0"
    assert sent[props.RETRY_TOPIC] == "Orders"  # the consumer shows the original topic
    assert sent[props.UNIQ_KEY] == "NEW" and sent[props.ORIGIN_MESSAGE_ID] == "ID0"
    assert (sent[REPLAY_ID], sent[REPLAY_TIME]) == ("G/x", "77")  # the old REPLAY_ID replaced
    assert (sent[props.TAGS], sent[props.KEYS], sent["user"]) == ("TA", "k1 k2", "u")
    for dropped in (props.MAX_RECONSUME_TIMES, props.DUE_TIME, props.REAL_TOPIC):
        assert dropped not in sent
    assert len(headers) == len({name for name, _ in headers})  # each header once


def test_replay_to_original_goes_to_the_business_topic_without_retry_topic() -> None:
    dead = letter(**{props.ORIGIN_MESSAGE_ID: "-", props.BORN_TIMESTAMP: "-"})
    topic, headers = _record(dead, "original")
    sent = _props(headers)
    assert topic == "ns.Orders" and props.RETRY_TOPIC not in sent
    assert sent[props.ORIGIN_MESSAGE_ID] == "ID1"  # the dead letter's id, as first id
    assert sent[props.BORN_TIMESTAMP] == str(NOW)  # the dead-letter time stands in


@pytest.mark.parametrize("original", ["-", "bad topic!"])
def test_a_dead_letter_without_a_usable_original_topic_cannot_be_replayed(original: str) -> None:
    with pytest.raises(ConfigError, match="original topic"):
        replay_topic(letter(**{props.RETRY_TOPIC: original}), "retry")


def test_replay_options_refuse_bad_values_and_size_transactions_by_rate() -> None:
    assert ReplayOptions().per_transaction == 20_000
    assert ReplayOptions(rate=3).per_transaction == 3
    assert ReplayOptions(rate=0.5).per_transaction == 1
    for bad in (dict(rate=0), dict(rate=-1), dict(chunk=0)):
        with pytest.raises(ConfigError):
            ReplayOptions(**bad)  # type: ignore[arg-type]


def test_replay_headers_are_system_properties_users_cannot_set() -> None:
    assert {REPLAY_ID, REPLAY_TIME} <= SYSTEM_PROPERTIES
    for name in (REPLAY_ID, REPLAY_TIME):
        with pytest.raises(InvalidMessageError, match="reserved"):
            Message("Orders", body=b"", properties={name: "1"})


@pytest.mark.parametrize(
    "names",
    [
        (props.UNIQ_KEY, props.RECONSUME_TIME),  # nothing kept
        (props.UNIQ_KEY, props.RETRY_TOPIC, props.RECONSUME_TIME),  # one kept
        ("user", props.UNIQ_KEY, props.RETRY_TOPIC, "user", props.TAGS, props.DUE_TIME),
    ],
)
def test_the_kept_headers_are_every_other_one_byte_for_byte_in_order(
    names: tuple[str, ...],
) -> None:
    raw = tuple((name, f"{name}-{i}".encode()) for i, name in enumerate(names))
    dead = DeadLetter("G", "t", 0, 0, NOW, b"", None, raw)
    for target in ("retry", "original"):
        replaced = {props.UNIQ_KEY, props.RECONSUME_TIME, props.DUE_TIME}
        replaced |= {props.RETRY_TOPIC} if target == "original" else set()
        kept = [header for header in raw if header[0] not in replaced]
        sent = replay_headers(dead, target, "NEW", "r", replay_stamp(77))
        assert sent[: len(kept)] == kept
        assert [name for name, _ in sent[len(kept) :]] == [
            props.ORIGIN_MESSAGE_ID,
            props.BORN_TIMESTAMP,
            props.UNIQ_KEY,
            REPLAY_ID,
            props.RECONSUME_TIME,
            REPLAY_TIME,
        ]
