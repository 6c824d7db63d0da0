"""Transactional messages, the pure rules: record layout, op codec, check timing with a
fixed clock, watermarks, settings, names of the half and op topics."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from rmqcompat import properties as props
from rmqcompat.errors import ConfigError, InvalidNameError, MalformedHeaderError
from rmqcompat.message import Message, MessageExt
from rmqcompat.topics.naming import (
    TRANS_HALF_TOPIC,
    TRANS_OP_HALF_TOPIC,
    from_kafka_topic,
    to_kafka_topic,
)
from rmqcompat.topics.topology import build_topology
from rmqcompat.transaction import CheckSettings, LocalTransactionState
from rmqcompat.transaction import settings as kafka
from rmqcompat.transaction.pending import PendingHalves
from rmqcompat.transaction.records import (
    CHECK_IMMUNITY_TIME_IN_SECONDS,
    CHECK_TIMES,
    Half,
    Op,
    OpKind,
    committed_record,
    decision,
    half_record,
    op_record,
    read_op,
    sent_half,
)

S = CheckSettings()  # RocketMQ's defaults: 6 s, 60 s, 15 checks
BORN = 1_000_000


class _Record:
    """What the op decoder reads of a consumed record."""

    def __init__(self, headers: Any) -> None:
        self._headers = headers

    def headers(self) -> Any:
        return self._headers


def _half(offset: int = 5, group: str = "PG", born: int = BORN, **extra: str) -> Half:
    properties = {props.PGROUP: group, props.REAL_TOPIC: "Orders", props.UNIQ_KEY: "ID", **extra}
    message = MessageExt("Orders", b"body", "ID", 0, offset, born, born, 0, properties)
    return Half(0, offset, message)


def test_half_and_op_topics_have_fixed_kafka_names() -> None:
    assert to_kafka_topic(TRANS_HALF_TOPIC) == "rmq.trans-half"
    assert to_kafka_topic(TRANS_OP_HALF_TOPIC, "prod") == "prod.rmq.trans-op"
    assert from_kafka_topic("prod.rmq.trans-half") == ("prod", TRANS_HALF_TOPIC)
    assert from_kafka_topic("rmq.trans-op") == ("", TRANS_OP_HALF_TOPIC)


def test_topology_provisions_them_for_transactional_groups_only() -> None:
    plain = build_topology(groups=["G"], namespace="ns")
    assert TRANS_HALF_TOPIC not in plain.names()
    topology = build_topology(transaction_groups=["PG"], namespace="ns")
    kinds = {t.logical: t.kind for t in topology.topics}
    assert kinds[TRANS_HALF_TOPIC] == kinds[TRANS_OP_HALF_TOPIC] == "transaction"
    with pytest.raises(InvalidNameError):
        build_topology(transaction_groups=["bad group"])
    with pytest.raises(InvalidNameError, match="internal"):
        build_topology(topics=[TRANS_HALF_TOPIC])


def test_half_record_carries_real_topic_group_and_drops_the_delay() -> None:
    msg = Message("Orders", b"b", tags="T", keys="k", properties={"p": "v"}, delay_time_level=3)
    record = half_record(msg, "PG", "ns", "ID1", 42)
    assert record.topic == "ns.rmq.trans-half" and record.key is None
    headers = props.from_headers(record.headers)
    assert headers[props.REAL_TOPIC] == "Orders"
    assert headers[props.TRAN_MSG] == "true" and headers[props.PGROUP] == "PG"
    assert headers[props.UNIQ_KEY] == "ID1" and headers[props.BORN_TIMESTAMP] == "42"
    assert (headers[props.TAGS], headers[props.KEYS], headers["p"]) == ("T", "k", "v")
    assert props.DELAY not in headers  # RocketMQ ignores delay levels of transactions


def test_committed_record_is_the_half_on_its_real_topic() -> None:
    record = half_record(Message("Orders", b"b", tags="T"), "PG", "ns", "ID1", 42)
    half = sent_half(record, 1, 7, 50)
    assert (half.partition, half.offset, half.message.topic) == (1, 7, "Orders")
    assert half.message.born_timestamp == 42 and half.group == "PG"
    checked = dataclasses.replace(
        half,
        message=dataclasses.replace(
            half.message, properties={**half.message.properties, CHECK_TIMES: "2"}
        ),
    )
    out = committed_record(checked, "ns")
    assert out.topic == "ns.Orders" and out.value == b"b" and out.partition is None
    headers = props.from_headers(out.headers)
    assert props.REAL_TOPIC not in headers and CHECK_TIMES not in headers
    assert headers[props.UNIQ_KEY] == "ID1" and headers[props.TRAN_MSG] == "true"


@pytest.mark.parametrize("kind", list(OpKind))
def test_op_records_round_trip_in_the_halfs_partition(kind: OpKind) -> None:
    half = dataclasses.replace(_half(offset=9), partition=3)
    record = op_record(half, kind, "ns", check_times=4)
    assert record.topic == "ns.rmq.trans-op" and record.partition == 3
    op = read_op(_Record(record.headers))
    assert op == Op(kind, "PG", 9, 4 if kind is OpKind.CHECK else 0)
    assert op.kind.final is (kind is not OpKind.CHECK)


@pytest.mark.parametrize(
    "headers",
    [[], [("TRAN_OP", b"maybe"), ("TRAN_PREPARED_QUEUE_OFFSET", b"1")], [("TRAN_OP", b"commit")]],
)
def test_malformed_op_records_raise(headers: Any) -> None:
    with pytest.raises(MalformedHeaderError):
        read_op(_Record(headers))


def test_decisions() -> None:
    assert decision(LocalTransactionState.COMMIT_MESSAGE) is OpKind.COMMIT
    assert decision(LocalTransactionState.ROLLBACK_MESSAGE) is OpKind.ROLLBACK
    assert decision(LocalTransactionState.UNKNOW) is None


def test_first_check_after_the_immunity_then_every_interval_then_discard() -> None:
    pending = PendingHalves("PG", CheckSettings(check_max=2))
    pending.add_half(_half())
    assert pending.due(0, BORN + 5_999) == []
    (due,) = pending.due(0, BORN + 6_000)
    assert (due.checks_done, due.discard) == (0, False)
    pending.apply_op(0, Op(OpKind.CHECK, "PG", 5, 1), BORN + 6_000)
    assert pending.due(0, BORN + 65_999) == []
    assert pending.due(0, BORN + 66_000)[0].checks_done == 1
    pending.apply_op(0, Op(OpKind.CHECK, "PG", 5, 2), BORN + 66_000)
    (last,) = pending.due(0, BORN + 126_000)
    assert last.discard  # check_max checks made: rolled back instead of a third
    pending.apply_op(0, Op(OpKind.ROLLBACK, "PG", 5), BORN + 126_000)
    assert pending.due(0, BORN + 10**9) == [] and pending.pending(0) == 0


def test_a_message_own_immunity_replaces_the_settings_shorter_or_longer() -> None:
    """RocketMQ's getImmunityTime: the property's seconds replace transactionTimeOut; -1
    or a value Long.parseLong refuses leaves the default (6 s here)."""
    pending = PendingHalves("PG", S)
    pending.add_half(_half(offset=1, **{CHECK_IMMUNITY_TIME_IN_SECONDS: "20"}))
    pending.add_half(_half(offset=2, **{CHECK_IMMUNITY_TIME_IN_SECONDS: "1"}))
    pending.add_half(_half(offset=3, **{CHECK_IMMUNITY_TIME_IN_SECONDS: "-1"}))
    pending.add_half(_half(offset=4, **{CHECK_IMMUNITY_TIME_IN_SECONDS: "soon"}))
    pending.add_half(_half(offset=5))
    assert [d.half.offset for d in pending.due(0, BORN + 999)] == []
    assert [d.half.offset for d in pending.due(0, BORN + 1_000)] == [2]
    assert [d.half.offset for d in pending.due(0, BORN + 6_000)] == [2, 3, 4, 5]
    assert [d.half.offset for d in pending.due(0, BORN + 20_000)] == [1, 2, 3, 4, 5]


def test_ops_read_before_their_half_still_count() -> None:
    pending = PendingHalves("PG", S)
    pending.apply_op(0, Op(OpKind.COMMIT, "PG", 5), BORN)
    pending.apply_op(0, Op(OpKind.CHECK, "PG", 6, 3), BORN + 10_000)
    pending.add_half(_half(offset=5))
    pending.add_half(_half(offset=6))
    assert pending.pending(0) == 1
    assert pending.due(0, BORN + 69_999) == []  # last check at +10 s, interval 60 s
    assert pending.due(0, BORN + 70_000)[0].checks_done == 3


def test_a_stale_check_count_never_lowers_it() -> None:
    pending = PendingHalves("PG", S)
    pending.add_half(_half())
    pending.apply_op(0, Op(OpKind.CHECK, "PG", 5, 4), BORN + 100)
    pending.apply_op(0, Op(OpKind.CHECK, "PG", 5, 2), BORN + 200)
    assert pending.due(0, BORN + 60_100)[0].checks_done == 4


def test_other_groups_and_decided_offsets_are_ignored() -> None:
    pending = PendingHalves("PG", S)
    pending.begin(0, 5)
    pending.add_half(_half(offset=7, group="OTHER"))
    pending.apply_op(0, Op(OpKind.COMMIT, "OTHER", 8), BORN)
    pending.apply_op(0, Op(OpKind.COMMIT, "PG", 4), BORN)  # below where reading starts
    pending.add_half(_half(offset=8))
    assert pending.pending(0) == 1


def test_watermark_is_the_oldest_undecided_half() -> None:
    pending = PendingHalves("PG", S)
    assert pending.watermark(0, 30) == 30
    for offset in (12, 9, 20):
        pending.add_half(_half(offset=offset))
    assert pending.watermark(0, 30) == 9
    pending.apply_op(0, Op(OpKind.ROLLBACK, "PG", 9), BORN)
    assert pending.watermark(0, 30) == 12
    pending.forget(0)
    assert pending.pending(0) == 0 and pending.watermark(0, 30) == 30


@pytest.mark.parametrize(
    "kwargs",
    [
        {"check_immunity_time_s": 0},
        {"check_interval_s": -1},
        {"check_max": -1},
        {"poll_interval_s": 0},
    ],
)
def test_check_settings_are_validated(kwargs: dict[str, float]) -> None:
    with pytest.raises(ConfigError, match=next(iter(kwargs))):
        CheckSettings(**kwargs)


def test_rocketmq_defaults() -> None:
    assert (S.check_immunity_time_s, S.check_interval_s, S.check_max) == (6.0, 60.0, 15)


def test_kafka_settings_of_the_three_clients() -> None:
    from rmqcompat.config import ClientConfig

    client = ClientConfig("b:9092", "ns", kafka_config={"partition.assignment.strategy": "x"})
    tid = kafka.transactional_id("PG", "host-1", "ns")
    assert (
        tid
        == kafka.transactional_id("PG", "host-1", "ns")
        != kafka.transactional_id("PG", "host-2", "ns")
    )
    ender = kafka.ender(client, tid, 3000)
    assert ender["transactional.id"] == tid
    assert ender["message.timeout.ms"] <= ender["transaction.timeout.ms"]
    half = kafka.half_producer(client, 3000)
    assert (half["acks"], half["enable.idempotence"]) == ("all", True)
    check = kafka.check_consumer(client, kafka.check_group_id("PG", "ns"))
    assert check["isolation.level"] == "read_committed"
    assert check["partition.assignment.strategy"] == "range"  # co-partitioned half/op
    assert check["group.id"] == "ns%PG.rmq.trans-check"
    assert kafka.check_group_id("PG", "") == "PG.rmq.trans-check"
