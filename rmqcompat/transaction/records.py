"""The records of a transaction (pure): half message, its op records, the committed message.

- A *half* record goes to ``RMQ_SYS_TRANS_HALF_TOPIC`` with the message's body and
  properties plus ``REAL_TOPIC`` (where a commit sends it), ``TRAN_MSG=true``, ``PGROUP``
  (the producer group that checks it) and ``__transactionId__`` (its message id, as
  RocketMQ's broker writes it on the half). A delay level or timer is dropped, as
  RocketMQ drops it for transactional messages.
- An *op* record goes to ``RMQ_SYS_TRANS_OP_HALF_TOPIC``, partition = the half's
  partition, and says what happened to the half at ``TRAN_PREPARED_QUEUE_OFFSET``:
  ``commit``, ``rollback`` (both final) or ``check`` (the ``TRANSACTION_CHECK_TIMES``-th
  check is being made; it makes the count survive restarts).
- The *committed* record is the half's body, key and properties on ``REAL_TOPIC``, minus
  ``REAL_TOPIC``/``REAL_QID`` (as RocketMQ's ``EndTransactionProcessor`` keeps
  ``TRAN_MSG``, ``PGROUP``, ``__transactionId__`` and the message id); committed by a
  check, it says which one in ``TRANSACTION_CHECK_TIMES``, as RocketMQ's renewed half does.
- A half still undecided after ``check_max`` checks is rolled back and a *copy* of it, as
  stored, goes to ``TRANS_CHECK_MAX_TIME_TOPIC`` (RocketMQ's ``resolveDiscardMsg``), where
  an operator can still find it.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass

from rmqcompat import properties as props
from rmqcompat.errors import MalformedHeaderError
from rmqcompat.message import Message, MessageExt
from rmqcompat.producer.records import message_properties
from rmqcompat.topics.naming import (
    TRANS_CHECK_MAX_TIME_TOPIC,
    TRANS_HALF_TOPIC,
    TRANS_OP_HALF_TOPIC,
    to_kafka_topic,
)
from rmqcompat.transaction.state import LocalTransactionState
from rmqcompat.wire import KafkaRecord, OutgoingRecord, TopicDecoder, decode_properties

#: RocketMQ's property names for the check count, per-message immunity and half offset.
CHECK_TIMES = "TRANSACTION_CHECK_TIMES"
CHECK_IMMUNITY_TIME_IN_SECONDS = "CHECK_IMMUNITY_TIME_IN_SECONDS"
HALF_OFFSET = "TRAN_PREPARED_QUEUE_OFFSET"
#: RocketMQ's transaction id property: the half's message id.
TRANSACTION_ID = "__transactionId__"
#: What an op record says (rmqcompat's own header; RocketMQ uses a tag on the op message).
OP_KIND = "TRAN_OP"

_NOT_COPIED = frozenset({props.REAL_TOPIC, props.REAL_QID, CHECK_TIMES})


class OpKind(enum.Enum):
    COMMIT = "commit"
    ROLLBACK = "rollback"
    CHECK = "check"

    @property
    def final(self) -> bool:
        return self is not OpKind.CHECK


def decision(state: LocalTransactionState) -> OpKind | None:
    """The final op a local transaction's (or a check's) answer writes; None for UNKNOW."""
    if state is LocalTransactionState.COMMIT_MESSAGE:
        return OpKind.COMMIT
    if state is LocalTransactionState.ROLLBACK_MESSAGE:
        return OpKind.ROLLBACK
    return None


@dataclass(frozen=True)
class Half:
    """A stored half message: where it is and the message the listener is shown (its
    ``topic`` is the real topic, as RocketMQ shows a checked message)."""

    partition: int
    offset: int
    message: MessageExt

    @property
    def group(self) -> str:
        return self.message.properties.get(props.PGROUP, "")


@dataclass(frozen=True)
class Op:
    """One op record: ``kind`` for the half at ``half_offset`` of the same partition."""

    kind: OpKind
    group: str
    half_offset: int
    check_times: int = 0


def half_record(
    msg: Message, group: str, namespace: str, msg_id: str, now_ms: int
) -> OutgoingRecord:
    """The half record of ``msg`` sent by producer group ``group``."""
    properties = message_properties(msg, msg_id, now_ms)
    properties.pop(props.DELAY, None)
    properties.pop(props.TIMER_DELIVER_MS, None)
    properties[props.REAL_TOPIC] = msg.topic
    properties[props.TRAN_MSG] = "true"
    properties[props.PGROUP] = group
    properties[TRANSACTION_ID] = msg_id
    topic = to_kafka_topic(TRANS_HALF_TOPIC, namespace)
    return OutgoingRecord(topic, msg.body_bytes(), None, props.to_headers(properties))


def sent_half(record: OutgoingRecord, partition: int, offset: int, stored_ms: int) -> Half:
    """The :class:`Half` of a half record this process just stored."""
    decoded = _half_message(record.headers, record.value, record.key, partition, offset, stored_ms)
    return Half(partition, offset, decoded)


def read_half(record: KafkaRecord, decoder: TopicDecoder) -> Half:
    """The :class:`Half` of a consumed half record.

    Raises:
        MalformedHeaderError: its headers cannot be read, or it names no real topic.
    """
    partition, offset = record.partition() or 0, record.offset() or 0
    message = decoder.decode(record, partition, offset)
    real = message.properties.get(props.REAL_TOPIC)
    if not real:
        raise MalformedHeaderError(f"half message at {partition}@{offset} has no REAL_TOPIC")
    return Half(partition, offset, dataclasses.replace(message, topic=real))


def _half_message(
    headers: props.Headers, value: bytes, key: bytes | None, partition: int, offset: int, ts: int
) -> MessageExt:
    properties = decode_properties(headers)
    born = props.decode_int(properties, props.BORN_TIMESTAMP, ts)
    msg_id = properties[props.UNIQ_KEY]
    real = properties[props.REAL_TOPIC]
    return MessageExt(real, value, msg_id, partition, offset, born, ts, 0, properties, key)


def committed_record(half: Half, namespace: str, check_times: int = 0) -> OutgoingRecord:
    """The record a COMMIT delivers to the half's real topic; ``check_times``: the check
    that committed it (0: the local transaction did)."""
    message = half.message
    kept = {k: v for k, v in message.properties.items() if k not in _NOT_COPIED}
    if check_times:
        kept[CHECK_TIMES] = props.encode_int(check_times)
    topic = to_kafka_topic(message.topic, namespace)
    return OutgoingRecord(topic, message.body, message.key, props.to_headers(kept))


def discarded_copy(half: Half, namespace: str) -> OutgoingRecord:
    """The copy of ``half`` kept in ``TRANS_CHECK_MAX_TIME_TOPIC`` when it is discarded:
    its body, key and every property (``REAL_TOPIC`` and the check count included)."""
    message = half.message
    topic = to_kafka_topic(TRANS_CHECK_MAX_TIME_TOPIC, namespace)
    return OutgoingRecord(topic, message.body, message.key, props.to_headers(message.properties))


def op_record(half: Half, kind: OpKind, namespace: str, check_times: int = 0) -> OutgoingRecord:
    """The op record saying ``kind`` about ``half`` (in the op partition of its partition)."""
    properties = {OP_KIND: kind.value, props.PGROUP: half.group, HALF_OFFSET: str(half.offset)}
    if kind is OpKind.CHECK:
        properties[CHECK_TIMES] = props.encode_int(check_times)
    topic = to_kafka_topic(TRANS_OP_HALF_TOPIC, namespace)
    return OutgoingRecord(topic, b"", None, props.to_headers(properties), half.partition)


def read_op(record: KafkaRecord) -> Op:
    """Decode an op record.

    Raises:
        MalformedHeaderError: a header is missing or malformed.
    """
    properties = props.from_headers(record.headers())
    try:
        kind = OpKind(properties.get(OP_KIND, ""))
    except ValueError:
        raise MalformedHeaderError(f"op record has no valid {OP_KIND}: {properties}") from None
    offset = props.decode_int(properties, HALF_OFFSET)
    checks = props.decode_int(properties, CHECK_TIMES, 0)
    return Op(kind, properties.get(props.PGROUP, ""), offset, checks)
