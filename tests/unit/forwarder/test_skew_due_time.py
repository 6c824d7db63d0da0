"""When a parked record is due: at the ``DUE_TIME`` its parker wrote (the user's send call,
the listener's failure), with the broker's append time bounding how far the parker's clock
is trusted (clock skew, issue 7 item 1; lateness from the send call, issue 22).

Every clock here is injected: the sender's, the consumer's and the forwarder's.
"""

from dataclasses import dataclass

from confluent_kafka import TIMESTAMP_CREATE_TIME, TIMESTAMP_LOG_APPEND_TIME

from rmqcompat import parking
from rmqcompat import properties as props
from rmqcompat.consumer.sendback import SendBack
from rmqcompat.forwarder.plan import Forward, Planner, Wait
from rmqcompat.message import Message, MessageExt
from rmqcompat.producer.records import build_record
from rmqcompat.retry import RetryPolicy
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.wire import OutgoingRecord

BROKER_NOW = 1_700_000_000_000
LEVELS = DelayLevels.parse("1s 3s 10s")
NS = "ns"


@dataclass
class Stored:
    """A parked record as the forwarder reads it back, with the broker's timestamp."""

    out: OutgoingRecord
    stamp: tuple[int, int]

    def topic(self) -> str:
        return self.out.topic

    def partition(self) -> int:
        return 0

    def offset(self) -> int:
        return 7

    def key(self) -> bytes | None:
        return self.out.key

    def value(self) -> bytes | None:
        return self.out.value

    def headers(self) -> list[tuple[str, bytes | None]]:
        return self.out.headers

    def timestamp(self) -> tuple[int, int]:
        return self.stamp


def appended(out: OutgoingRecord, at: int = BROKER_NOW) -> Stored:
    return Stored(out, (TIMESTAMP_LOG_APPEND_TIME, at))


def plan(record: Stored, delay_ms: int, forwarder_now: int):
    return Planner(LEVELS, NS).plan(record, delay_ms, forwarder_now)


def test_sender_150ms_ahead_does_not_turn_a_3s_level_into_zero() -> None:
    sender_clock = BROKER_NOW + 150
    prepared = build_record(
        Message("Orders", body=b"b", delay_time_level=2),
        physical_topic="ns.Orders",
        namespace=NS,
        levels=LEVELS,
        msg_id="id",
        now_ms=sender_clock,
    )
    record = appended(prepared.record)
    assert plan(record, 3000, BROKER_NOW) == Wait(BROKER_NOW + 3000)
    assert plan(record, 3000, BROKER_NOW + 2999) == Wait(BROKER_NOW + 3000)
    assert isinstance(plan(record, 3000, BROKER_NOW + 3000), Forward)


def test_a_record_appended_late_is_due_at_the_time_its_parker_wrote() -> None:
    # Stamped at the send call, appended 300 ms later (a queue, a busy broker): the delay
    # counts from the send call, so the wait before the append is not added to it.
    out = parking.park(
        b"b", None, {}, real_topic="T", level=3, levels=LEVELS, namespace=NS,
        now_ms=BROKER_NOW - 300,
    )  # fmt: skip
    assert plan(appended(out), 10_000, BROKER_NOW) == Wait(BROKER_NOW - 300 + 10_000)


def test_sender_far_ahead_never_lengthens_a_level_nor_far_behind_shortens_it_much() -> None:
    for sender_skew in (300, 600_000):
        out = parking.park(
            b"b", None, {}, real_topic="T", level=3, levels=LEVELS, namespace=NS,
            now_ms=BROKER_NOW + sender_skew,
        )  # fmt: skip
        assert plan(appended(out), 10_000, BROKER_NOW + 1) == Wait(BROKER_NOW + 10_000)
    for sender_skew in (-3_600_000, -2_000):
        out = parking.park(
            b"b", None, {}, real_topic="T", level=3, levels=LEVELS, namespace=NS,
            now_ms=BROKER_NOW + sender_skew,
        )  # fmt: skip
        earliest = BROKER_NOW + 10_000 - parking.MAX_PARK_LAG_MS
        assert plan(appended(out), 10_000, BROKER_NOW + 1) == Wait(earliest)


def test_no_parker_clock_turns_a_short_level_into_nothing() -> None:
    out = parking.park(
        b"b", None, {}, real_topic="T", level=1, levels=LEVELS, namespace=NS,
        now_ms=BROKER_NOW - 3_600_000,
    )  # fmt: skip
    assert plan(appended(out), 1000, BROKER_NOW) == Wait(BROKER_NOW + 500)
    assert parking.park_lag_ms(1000) == 500 and parking.park_lag_ms(10_000) == 1000


class _Sink:
    def __init__(self) -> None:
        self.records: list[OutgoingRecord] = []

    def produce(self, record: OutgoingRecord, done) -> None:
        self.records.append(record)
        done(None)


def test_consumer_300ms_ahead_does_not_burn_its_retries() -> None:
    sink = _Sink()
    policy = RetryPolicy("G", LEVELS, max_reconsume_times=16)
    consumer_clock = lambda: BROKER_NOW + 300  # noqa: E731
    sendback = SendBack(sink, policy, NS, now_ms=consumer_clock)  # type: ignore[arg-type]
    failed = MessageExt("Orders", b"b", "id", 0, 5, BROKER_NOW, BROKER_NOW, 0, {}, None)
    sendback.send(failed, 0, 1, lambda _err: None)
    (out,) = sink.records
    assert out.topic == "ns.rmq.delay.1s"
    assert plan(appended(out), 1000, BROKER_NOW) == Wait(BROKER_NOW + 1000)


def test_forwarder_clock_behind_the_broker_waits_longer_never_shorter() -> None:
    out = parking.park(
        b"b", None, {}, real_topic="T", level=2, levels=LEVELS, namespace=NS, now_ms=BROKER_NOW
    )
    forwarder_now = BROKER_NOW - 2000  # 2 s behind the broker and the sender
    assert plan(appended(out), 3000, forwarder_now) == Wait(BROKER_NOW + 3000)


def test_create_time_topic_falls_back_to_the_parkers_due_time() -> None:
    # Level topics created before LogAppendTime (or a broker that ignores it, Tansu).
    out = parking.park(
        b"b", None, {}, real_topic="T", level=2, levels=LEVELS, namespace=NS,
        now_ms=BROKER_NOW + 150,
    )  # fmt: skip
    record = Stored(out, (TIMESTAMP_CREATE_TIME, BROKER_NOW + 150))
    # Skew below a clock jump is waited out: late by the skew, never immediate.
    assert plan(record, 3000, BROKER_NOW) == Wait(BROKER_NOW + 3150)


def test_timer_keeps_its_absolute_deadline_in_the_senders_clock() -> None:
    deliver = BROKER_NOW + 2500
    timer = {props.TIMER_DELIVER_MS: str(deliver)}
    out = parking.park(
        b"b", None, timer, real_topic="T", level=2, levels=LEVELS, namespace=NS,
        now_ms=BROKER_NOW + 400,
    )  # fmt: skip
    assert plan(appended(out), 3000, BROKER_NOW) == Wait(deliver)
    due = plan(appended(out), 3000, deliver)
    assert isinstance(due, Forward) and not due.hop
    assert (
        parking.due_time(props.from_headers(out.headers), append_ms=BROKER_NOW, level_delay_ms=3000)
        == deliver
    )
