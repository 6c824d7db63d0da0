"""What the forwarder does with a head record, with a fixed clock and a fake record."""

from dataclasses import dataclass, field

import pytest

from rmqcompat import parking
from rmqcompat import properties as props
from rmqcompat.forwarder import plan as plan_module
from rmqcompat.forwarder.plan import Forward, Planner, Quarantine, Wait, plan_head
from rmqcompat.forwarder.schedule import CLOCK_JUMP_MS
from rmqcompat.topics.delay_levels import DelayLevels

NOW = 1_700_000_000_000
LEVELS = DelayLevels.parse("100ms 1s 10s")
NS = "ns1"


@dataclass
class FakeRecord:
    hdrs: list[tuple[str, bytes | None]] | None
    val: bytes | None = b"body"
    k: bytes | None = b"key"
    topic_name: str = "ns1.rmq.delay.1s"
    extra: dict = field(default_factory=dict)

    def topic(self) -> str:
        return self.topic_name

    def partition(self) -> int:
        return 2

    def offset(self) -> int:
        return 41

    def key(self) -> bytes | None:
        return self.k

    def value(self) -> bytes | None:
        return self.val

    def headers(self) -> list[tuple[str, bytes | None]] | None:
        return self.hdrs

    def timestamp(self) -> tuple[int, int]:
        return (1, NOW)


def parked(level: int = 2, parked_at: int = NOW - 1000, **properties: str) -> FakeRecord:
    out = parking.park(
        b"body",
        b"key",
        {"USER": "u", props.UNIQ_KEY: "id1", **properties},
        real_topic="%RETRY%g1",
        level=level,
        levels=LEVELS,
        namespace=NS,
        now_ms=parked_at,
    )
    return FakeRecord(out.headers, topic_name=out.topic)


def plan(record: FakeRecord, now: int = NOW, delay: int = 1000):
    return plan_head(record, delay, LEVELS, NS, now)


def test_due_record_goes_to_its_real_topic_with_its_due_time_removed() -> None:
    result = plan(parked())
    assert isinstance(result, Forward) and not result.hop
    assert result.due_ms == NOW
    assert result.record.topic == "ns1.rmq.retry.g1"
    assert (result.record.key, result.record.value) == (b"key", b"body")
    headers = dict(result.record.headers)
    # as Apache RocketMQ 5.5.0 delivers it: REAL_TOPIC, REAL_QID and the level waited on
    kept = {props.REAL_TOPIC: b"%RETRY%g1", props.REAL_QID: b"-1", props.DELAY: b"2"}
    assert headers == {"USER": b"u", props.UNIQ_KEY: b"id1", **kept}
    assert result.record.partition is None  # REAL_QID -1: the key picks the partition


def test_record_not_yet_due_waits_until_its_due_time() -> None:
    assert plan(parked(parked_at=NOW - 400)) == Wait(NOW + 600)


def test_due_time_beyond_now_plus_delay_is_corrected_to_now() -> None:
    skewed = parked(parked_at=NOW + 2 * CLOCK_JUMP_MS)  # the producer's clock jumped ahead
    result = plan(skewed)
    assert isinstance(result, Forward) and result.due_ms == NOW


def test_timer_message_not_yet_at_its_time_hops_to_the_largest_fitting_level() -> None:
    deliver = NOW + 1_500
    result = plan(parked(level=2, **{props.TIMER_DELIVER_MS: str(deliver)}))
    assert isinstance(result, Forward) and result.hop
    assert result.record.topic == "ns1.rmq.delay.1s"
    headers = props.from_headers(result.record.headers)
    assert headers[props.DUE_TIME] == str(NOW + 1000)
    assert headers[props.TIMER_DELIVER_MS] == str(deliver)
    assert headers[props.REAL_TOPIC] == "%RETRY%g1"


def test_timer_message_at_its_time_is_delivered_with_its_timer_headers() -> None:
    result = plan(parked(level=2, **{props.TIMER_DELIVER_MS: str(NOW)}))
    assert isinstance(result, Forward) and not result.hop
    headers = dict(result.record.headers)
    assert headers[props.TIMER_OUT_MS] == headers[props.TIMER_DELIVER_MS] == str(NOW).encode()
    assert props.DELAY not in headers


def _headers(**values: bytes | None) -> list[tuple[str, bytes | None]]:
    return list(values.items())


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        (None, "DUE_TIME is missing"),
        (_headers(REAL_TOPIC=b"T", DUE_TIME=b"soon"), "not a decimal integer"),
        (_headers(DUE_TIME=str(NOW).encode()), "REAL_TOPIC is missing"),
        (_headers(REAL_TOPIC=b"bad topic!", DUE_TIME=str(NOW).encode()), "outside RocketMQ"),
        (_headers(REAL_TOPIC=b"\xff", DUE_TIME=str(NOW).encode()), "not UTF-8"),
        (_headers(REAL_TOPIC=None, DUE_TIME=str(NOW).encode()), "has no value"),
        (
            [("REAL_TOPIC", b"T"), ("REAL_TOPIC", b"U"), ("DUE_TIME", str(NOW).encode())],
            "appears more than once",
        ),
    ],
)
def test_unparseable_records_are_quarantined_with_the_reason(headers, reason: str) -> None:
    record = FakeRecord(headers)
    result = plan(record)
    assert isinstance(result, Quarantine)
    assert reason in result.reason
    assert result.record.topic == "ns1.rmq.quarantine"
    quarantine_headers = dict(result.record.headers)
    assert reason in quarantine_headers[props.QUARANTINE_REASON].decode()
    assert result.record.value == b"body"


@pytest.mark.parametrize(
    "headers",
    [
        _headers(DUE_TIME=str(NOW + 500).encode()),
        _headers(REAL_TOPIC=b"bad topic!", DUE_TIME=str(NOW + 500).encode()),  # the fast path
    ],
)
def test_poison_record_not_yet_due_is_quarantined_at_once(headers) -> None:
    assert isinstance(plan(FakeRecord(headers)), Quarantine)


@pytest.mark.parametrize(
    "extra",
    [{}, {props.REAL_QID: "3", "Z": "ünïcode", props.KEYS: "a b"}, {props.TAGS: ""}],
)
def test_fast_path_headers_equal_what_parking_release_keeps(extra: dict[str, str]) -> None:
    # The fast path filters the raw header bytes instead of calling parking.release and
    # re-encoding; both must produce the same record.
    record = parked(**extra)
    result = plan(record)
    released = parking.release(props.from_headers(record.hdrs), LEVELS, NOW)
    assert isinstance(result, Forward)
    assert result.record.headers == props.to_headers(released.properties)


def test_planner_caches_the_topic_mapping_but_still_rejects_bad_names() -> None:
    planner = Planner(LEVELS, NS)
    for _ in range(2):
        result = planner.plan(parked(), 1000, NOW)
        assert isinstance(result, Forward) and result.record.topic == "ns1.rmq.retry.g1"
    bad = FakeRecord(_headers(REAL_TOPIC=b"bad topic!", DUE_TIME=str(NOW).encode()))
    assert isinstance(planner.plan(bad, 1000, NOW), Quarantine)
    assert isinstance(planner.plan(bad, 1000, NOW), Quarantine)


def test_planner_remembers_a_bounded_number_of_real_topics(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past the bound it starts over: every record still goes to its own real topic."""
    monkeypatch.setattr(plan_module, "_ACCEPTED_MAX", 2)
    planner = Planner(LEVELS, NS)
    for _ in range(2):
        for group in ("g1", "g2", "g3"):
            record = FakeRecord(
                _headers(REAL_TOPIC=f"%RETRY%{group}".encode(), DUE_TIME=str(NOW).encode())
            )
            result = planner.plan(record, 1000, NOW)
            assert isinstance(result, Forward) and result.record.topic == f"ns1.rmq.retry.{group}"
    assert len(planner._accepted) <= 2
