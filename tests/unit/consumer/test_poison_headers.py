"""No record can stop a partition: decode, routing and send-back either succeed with sane
values or name a quarantine reason (issue 7 item 5).

The fuzzed path is the poll thread's: ``Intake.accept`` (decode, retry-topic reset, tag
filter) and, for a message the listener failed, ``SendBack.send`` (routing, send-back
properties, parking). Headers are drawn over every RocketMQ property name the consumer
reads or carries, with arbitrary bytes, None, duplicates and huge or negative integers.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rmqcompat import properties as props
from rmqcompat.config import ClientConfig
from rmqcompat.consumer.intake import Intake
from rmqcompat.consumer.partitions import Partitions
from rmqcompat.consumer.sendback import SendBack
from rmqcompat.consumer.settings import ConsumerSettings
from rmqcompat.consumer.subscriptions import Subscriptions
from rmqcompat.message import SYSTEM_PROPERTIES, MessageQueue
from rmqcompat.retry import RetryPolicy, route_failed
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.naming import from_kafka_topic, validate_topic
from rmqcompat.wire import OutgoingRecord

TOPIC, RETRY = "ns.T", "ns.rmq.retry.G"
JAVA_INT_MAX, JAVA_LONG_MAX = 2**31 - 1, 2**63 - 1
LEVELS = DelayLevels.parse("1s 5s 10s 30s 1m")
# every system property the consumer may read, and one user property
NAMES = [*sorted(SYSTEM_PROPERTIES - {props.QUARANTINE_REASON}), "user-prop"]

_ints = st.one_of(
    st.integers(-(2**70), 2**70),
    st.sampled_from([-5, -3, -1, 0, JAVA_INT_MAX, JAVA_INT_MAX + 1, JAVA_LONG_MAX + 1]),
    st.integers(10**20, 10**30).map(lambda n: -n),
)
_values = st.one_of(
    st.none(),
    st.binary(max_size=12),
    _ints.map(lambda n: str(n).encode()),
    st.sampled_from([b"9" * 5000, b"-" + b"9" * 5000, b"+7", b" 7", b"0x10", b""]),
    st.sampled_from([b"T", b"%RETRY%G", b"%DLQ%G", b"a b", b"x" * 200]),
    st.text(max_size=8).map(str.encode),
)
_headers = st.lists(st.tuples(st.sampled_from(NAMES), _values), max_size=8)


class Record:
    def __init__(self, topic: str, headers: list) -> None:
        self._topic, self._headers = topic, headers

    def error(self) -> None:
        return None

    def topic(self) -> str:
        return self._topic

    def partition(self) -> int:
        return 0

    def offset(self) -> int:
        return 0

    def key(self) -> None:
        return None

    def value(self) -> bytes:
        return b"body"

    def headers(self) -> list:
        return self._headers

    def timestamp(self) -> tuple[int, int]:
        return (1, 1000)


class Sink:
    """Accepts every record at once."""

    def __init__(self) -> None:
        self.records: list[OutgoingRecord] = []

    def produce(self, record: OutgoingRecord, done) -> None:
        self.records.append(record)
        done(None)


def _pipeline(max_reconsume_times: int = 3):
    client = ClientConfig("localhost:9092", "ns", "1s 5s 10s 30s 1m")
    settings = ConsumerSettings("G", client, max_reconsume_times=max_reconsume_times)
    subs = Subscriptions("G", "ns")
    subs.add("T")
    subs.add_own_retry()
    partitions = Partitions(settings, lambda offsets, asynchronous: None)
    for key in ((TOPIC, 0), (RETRY, 0)):
        partitions.add(key, MessageQueue(subs.logical(key[0]), 0), 0)
    poisoned: list[str] = []
    intake = Intake(subs, partitions, lambda state, rec, why: poisoned.append(why))
    sink = Sink()
    sendback = SendBack(sink, settings.retry_policy(), "ns", now_ms=lambda: 10**12)  # type: ignore[arg-type]
    return intake, sendback, sink, poisoned


def _check_sent(record: OutgoingRecord, stored: int) -> None:
    sent = props.from_headers(record.headers)  # the next reader can decode it
    assert props.decode_int(sent, props.RECONSUME_TIME) == stored + 1
    from_kafka_topic(record.topic)  # a legal physical name of ours


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    headers=_headers,
    on_retry=st.booleans(),
    delay_level=st.one_of(st.sampled_from([-1, 0, 1, 3]), st.integers(-(2**40), 2**40)),
)
def test_decode_and_routing_never_raise_and_yield_sane_values_or_a_reason(
    headers, on_retry, delay_level
):
    intake, sendback, sink, poisoned = _pipeline()
    topic = RETRY if on_retry else TOPIC
    staged = intake.accept([Record(topic, headers)])
    msgs = staged[(topic, 0)]
    if poisoned:
        assert msgs == [] and len(poisoned) == 1 and poisoned[0].strip()
        return
    [msg] = msgs
    assert 0 <= msg.reconsume_times <= JAVA_INT_MAX
    assert 0 <= msg.born_timestamp <= JAVA_LONG_MAX
    validate_topic(msg.topic)
    assert -(2**31) <= msg.flag <= JAVA_INT_MAX
    outcomes = []
    sendback.send(msg, msg.reconsume_times, delay_level, outcomes.append)
    assert outcomes == [None]
    if sink.records:
        _check_sent(sink.records[-1], msg.reconsume_times)


@given(reconsume_times=st.integers(-(2**70), 2**70), delay_level=st.integers(-(2**70), 2**70))
def test_routing_is_total_over_all_integers(reconsume_times, delay_level):
    dest = route_failed(RetryPolicy("G", LEVELS), reconsume_times, delay_level)
    assert dest.level == 0 or 1 <= dest.level <= LEVELS.max_level


def test_a_negative_reconsume_time_on_the_retry_topic_is_read_as_zero_and_retried():
    intake, sendback, sink, poisoned = _pipeline()
    headers = props.to_headers({props.RECONSUME_TIME: "-5", props.RETRY_TOPIC: "T"})
    [msg] = intake.accept([Record(RETRY, headers)])[(RETRY, 0)]
    assert (msg.reconsume_times, msg.topic, poisoned) == (0, "T", [])
    outcomes = []
    sendback.send(msg, msg.reconsume_times, 0, outcomes.append)
    assert outcomes == [None]
    sent = props.from_headers(sink.records[0].headers)
    assert (sent[props.RECONSUME_TIME], sent[props.DELAY]) == ("1", "3")


def test_a_huge_reconsume_time_is_capped_and_goes_to_the_dlq():
    intake, sendback, sink, _ = _pipeline()
    headers = [(props.RECONSUME_TIME, b"9" * 5000), (props.RETRY_TOPIC, b"T")]
    [msg] = intake.accept([Record(RETRY, headers)])[(RETRY, 0)]
    assert msg.reconsume_times == JAVA_INT_MAX
    sendback.send(msg, msg.reconsume_times, 0, lambda err: None)
    assert ".dlq." in sink.records[0].topic


def test_an_illegal_retry_topic_is_quarantined_with_its_reason():
    intake, _, _, poisoned = _pipeline()
    headers = props.to_headers({props.RETRY_TOPIC: "a b"})
    assert intake.accept([Record(RETRY, headers)])[(RETRY, 0)] == []
    assert len(poisoned) == 1 and props.RETRY_TOPIC in poisoned[0]
