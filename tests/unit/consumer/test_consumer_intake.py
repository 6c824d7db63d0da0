"""The poll thread's intake: decode, retry-topic reset, tag filter, poison, revoked partitions."""

from __future__ import annotations

from rmqcompat import properties as props
from rmqcompat.config import ClientConfig
from rmqcompat.consumer.intake import Intake
from rmqcompat.consumer.partitions import Partitions
from rmqcompat.consumer.settings import ConsumerSettings
from rmqcompat.consumer.subscriptions import Subscriptions
from rmqcompat.message import MessageQueue

TOPIC, RETRY = "ns.T", "ns.rmq.retry.G"


class Record:
    def __init__(self, topic: str, partition: int, offset: int, headers: dict | list) -> None:
        self._where = (topic, partition, offset)
        self._headers = props.to_headers(headers) if isinstance(headers, dict) else headers

    def error(self) -> None:
        return None

    def topic(self) -> str:
        return self._where[0]

    def partition(self) -> int:
        return self._where[1]

    def offset(self) -> int:
        return self._where[2]

    def key(self) -> None:
        return None

    def value(self) -> bytes:
        return b"xy"

    def headers(self) -> list:
        return self._headers

    def timestamp(self) -> tuple[int, int]:
        return (1, 1000)


def _intake(expression: str = "*"):
    settings = ConsumerSettings("G", ClientConfig("localhost:9092", "ns"))
    subs = Subscriptions("G", "ns")
    subs.add("T", expression)
    subs.add_own_retry()
    partitions = Partitions(settings, lambda offsets, asynchronous: None)
    for key in ((TOPIC, 0), (TOPIC, 1), (RETRY, 0)):
        partitions.add(key, MessageQueue(subs.logical(key[0]), key[1]), 0)
    poisoned: list[tuple[int, str]] = []
    intake = Intake(subs, partitions, lambda state, rec, why: poisoned.append((rec.offset(), why)))
    return intake, partitions, poisoned


def test_messages_are_grouped_per_partition_in_fetch_order_and_tracked():
    intake, partitions, _ = _intake()
    records = [Record(TOPIC, 0, 0, {}), Record(TOPIC, 1, 5, {}), Record(TOPIC, 0, 1, {})]
    staged = intake.accept(records)
    assert {k: [m.queue_offset for m in v] for k, v in staged.items()} == {
        (TOPIC, 0): [0, 1],
        (TOPIC, 1): [5],
    }
    pq = partitions.get((TOPIC, 0)).pq
    assert (pq.count, pq.size_bytes, pq.first()) == (2, 4, 0)


def test_the_fetch_is_used_up_so_each_record_is_freed_once_read():
    intake, _, poisoned = _intake()
    records = [Record(TOPIC, 0, i, {}) for i in range(3)] + [Record(TOPIC, 1, 0, {})]
    records.append(Record(TOPIC, 1, 1, [("TAGS", b"\xff")]))  # poison: quarantined
    staged = intake.accept(records)
    assert records == [None] * 5
    assert sum(len(v) for v in staged.values()) == 4 and [p[0] for p in poisoned] == [1]


def test_retry_topic_messages_get_their_original_topic():
    intake, _, _ = _intake()
    staged = intake.accept([Record(RETRY, 0, 0, {props.RETRY_TOPIC: "T"})])
    assert staged[(RETRY, 0)][0].topic == "T"


def test_filtered_messages_are_seen_not_in_flight():
    intake, partitions, _ = _intake("A")
    staged = intake.accept([Record(TOPIC, 0, 0, {props.TAGS: "B"}), Record(TOPIC, 0, 1, {})])
    assert staged == {(TOPIC, 0): []}
    assert partitions.get((TOPIC, 0)).pq.commit_offset() == 2


def test_poison_record_stays_in_flight_and_is_quarantined():
    intake, partitions, poisoned = _intake()
    staged = intake.accept([Record(TOPIC, 0, 0, [("TAGS", b"\xff")]), Record(TOPIC, 0, 1, {})])
    assert [m.queue_offset for m in staged[(TOPIC, 0)]] == [1]
    assert [offset for offset, _ in poisoned] == [0]
    assert 0 in partitions.get((TOPIC, 0)).pq


def test_records_of_a_revoked_partition_are_skipped():
    intake, partitions, _ = _intake()
    partitions.drop([(TOPIC, 1)], commit=False)
    staged = intake.accept([Record(TOPIC, 1, 0, {}), Record(TOPIC, 0, 3, {})])
    assert list(staged) == [(TOPIC, 0)]


def test_runs_of_plain_records_and_the_records_between_them_are_each_decided():
    """The plain records of a run are taken in one call; a poison record, one that needs
    the general decode, another partition and the retry topic's records break the run
    and are decided one by one, in fetch order."""
    intake, partitions, poisoned = _intake()
    records = [
        Record(TOPIC, 0, 0, {}),
        Record(TOPIC, 0, 1, {props.UNIQ_KEY: "ID1"}),
        Record(TOPIC, 0, 2, [("TAGS", b"\xff")]),  # poison
        Record(TOPIC, 0, 3, {}),
        Record(TOPIC, 0, 4, {props.RECONSUME_TIME: "+3"}),  # a sign: the general decode
        Record(TOPIC, 0, 5, {}),
        Record(TOPIC, 1, 7, {}),
        Record(TOPIC, 0, 6, {}),
        Record(RETRY, 0, 0, {props.RETRY_TOPIC: "T"}),
        Record(RETRY, 0, 1, {props.RETRY_TOPIC: "T"}),
    ]
    staged = intake.accept(records)
    first = staged[(TOPIC, 0)]
    assert [m.queue_offset for m in first] == [0, 1, 3, 4, 5, 6]
    assert [m.msg_id for m in first[:2]] == [f"{TOPIC}@0@0", "ID1"]
    assert first[3].reconsume_times == 3
    assert [m.queue_offset for m in staged[(TOPIC, 1)]] == [7]
    assert [m.topic for m in staged[(RETRY, 0)]] == ["T", "T"]
    assert [offset for offset, _ in poisoned] == [2]
    pq = partitions.get((TOPIC, 0)).pq
    assert (pq.count, pq.size_bytes, pq.first(), pq.last()) == (7, 14, 0, 6)


def test_a_retry_topics_run_resets_each_message_and_stops_at_a_name_not_checked_yet():
    """After the first ``RETRY_TOPIC`` of a name is checked, the rest of the run is reset
    by the checked names; an illegal name in the run is still a poison record, and a
    message without ``RETRY_TOPIC`` keeps the retry topic."""
    intake, partitions, poisoned = _intake()
    records = [
        Record(RETRY, 0, 0, {props.RETRY_TOPIC: "T"}),
        Record(RETRY, 0, 1, {props.RETRY_TOPIC: "T"}),
        Record(RETRY, 0, 2, {props.RETRY_TOPIC: "no such name!"}),  # poison
        Record(RETRY, 0, 3, {props.RETRY_TOPIC: "T"}),
        Record(RETRY, 0, 4, {}),
        Record(RETRY, 0, 5, {props.RETRY_TOPIC: "U"}),
        Record(RETRY, 0, 6, {props.RETRY_TOPIC: "U"}),
    ]
    staged = intake.accept(records)
    taken = [(m.queue_offset, m.topic) for m in staged[(RETRY, 0)]]
    assert taken == [(0, "T"), (1, "T"), (3, "T"), (4, "%RETRY%G"), (5, "U"), (6, "U")]
    assert [offset for offset, _ in poisoned] == [2]
    assert records == [None] * 7
    assert partitions.get((RETRY, 0)).pq.count == 7  # the poison record stays in flight
