"""The drop-in's enums, constants, result tuple and exceptions match upstream's names and
integer values (apache/rocketmq-client-python), member for member."""

from __future__ import annotations

import pytest

from rmqcompat import client, consts, exceptions
from rmqcompat.dropin.enums import as_status
from rmqcompat.errors import FatalSendError, RetriableSendError, RmqCompatError


@pytest.mark.parametrize(
    ("enum", "members"),
    [
        (
            client.SendStatus,
            {"OK": 0, "FLUSH_DISK_TIMEOUT": 1, "FLUSH_SLAVE_TIMEOUT": 2, "SLAVE_NOT_AVAILABLE": 3},
        ),
        (client.TransactionStatus, {"COMMIT": 0, "ROLLBACK": 1, "UNKNOWN": 2}),
        (client.ConsumeStatus, {"CONSUME_SUCCESS": 0, "RECONSUME_LATER": 1}),
        (client.MessageModel, {"BROADCASTING": 0, "CLUSTERING": 1}),
        (client.TraceModel, {"OPEN": 0, "CLOSE": 1}),
    ],
)
def test_int_enums_have_upstreams_members_and_values(enum: type, members: dict[str, int]) -> None:
    assert {member.name: int(member) for member in enum} == members
    for name, value in members.items():
        assert enum[name] == value  # IntEnum: compares equal to its value, as upstream


def test_message_property_names_and_values() -> None:
    expected = {
        "TRACE_SWITCH": "TRACE_ON",
        "MSG_REGION": "MSG_REGION",
        "KEYS": "KEYS",
        "TAGS": "TAGS",
        "WAIT_STORE_MSG_OK": "WAIT",
        "DELAY_TIME_LEVEL": "DELAY",
        "RETRY_TOPIC": "RETRY_TOPIC",
        "REAL_TOPIC": "REAL_TOPIC",
        "REAL_QUEUE_ID": "REAL_QID",
        "TRANSACTION_PREPARED": "TRAN_MSG",
        "PRODUCER_GROUP": "PGROUP",
        "MIN_OFFSET": "MIN_OFFSET",
        "MAX_OFFSET": "MAX_OFFSET",
        "BUYER_ID": "BUYER_ID",
        "ORIGIN_MESSAGE_ID": "ORIGIN_MESSAGE_ID",
        "TRANSFER_FLAG": "TRANSFER_FLAG",
        "CORRECTION_FLAG": "CORRECTION_FLAG",
        "MQ2_FLAG": "MQ2_FLAG",
        "RECONSUME_TIME": "RECONSUME_TIME",
        "UNIQ_CLIENT_MESSAGE_ID_KEYIDX": "UNIQ_KEY",
        "MAX_RECONSUME_TIMES": "MAX_RECONSUME_TIMES",
        "CONSUME_START_TIMESTAMP": "CONSUME_START_TIME",
    }
    assert {m.name: m.value for m in consts.MessageProperty} == expected


def test_send_result_is_upstreams_named_tuple() -> None:
    result = client.SendResult(client.SendStatus.OK, "ID", 7)
    assert result._fields == ("status", "msg_id", "offset")
    status, msg_id, offset = result
    assert (status, msg_id, offset) == (0, "ID", 7)


def test_client_exports_upstreams_public_names() -> None:
    upstream_all = {
        "SendStatus",
        "Message",
        "ReceivedMessage",
        "Producer",
        "PushConsumer",
        "TransactionMQProducer",
        "TransactionStatus",
        "ConsumeStatus",
    }
    assert upstream_all <= set(client.__all__)
    for name in ("SendResult", "MessageModel", "TraceModel"):  # importable upstream too
        assert hasattr(client, name)


def test_exception_hierarchy() -> None:
    e = exceptions
    assert issubclass(e.RocketMQException, Exception)
    assert issubclass(e.RocketMQException, RmqCompatError)
    for cls in (e.NullPointerException, e.MallocFailed, e.ProducerException, e.ConsumerException):
        assert issubclass(cls, e.RocketMQException)
    for cls in (
        e.ProducerStartFailed,
        e.ProducerSendSyncFailed,
        e.ProducerSendOnewayFailed,
        e.ProducerSendOrderlyFailed,
        e.ProducerSendAsyncFailed,
    ):
        assert issubclass(cls, e.ProducerException)
    assert issubclass(e.PushConsumerStartFailed, e.ConsumerException)
    failed = e.ProducerSendAsyncFailed("boom", 3, "f.cpp", 12, "MQException")
    assert (str(failed), failed.error, failed.file, failed.line, failed.type) == (
        "boom",
        3,
        "f.cpp",
        12,
        "MQException",
    )


def test_wrap_keeps_text_and_retriable() -> None:
    from rmqcompat.message import Message

    cause = RetriableSendError("busy", Message("T"))
    wrapped = exceptions.wrap(exceptions.ProducerSendSyncFailed, cause)
    assert wrapped.retriable and "busy" in str(wrapped)
    assert not exceptions.wrap(
        exceptions.ProducerSendSyncFailed, FatalSendError("no", Message("T"))
    ).retriable


def test_as_status_takes_members_and_their_ints_but_nothing_else() -> None:
    status = client.ConsumeStatus
    assert as_status(status, status.RECONSUME_LATER) is status.RECONSUME_LATER
    assert as_status(status, 0) is status.CONSUME_SUCCESS  # upstream's C callback takes ints
    for foreign in (None, True, False, 2, "CONSUME_SUCCESS", 0.0, client.TransactionStatus.COMMIT):
        assert as_status(status, foreign) is None, foreign
