"""Whether a COMMIT can deliver a transactional message, asked before its half is stored.

RocketMQ's producer refuses a transactional send whose topic has no route, or whose body
is over the limit, before the local transaction runs. Without the same check here the
half would be stored and the local transaction would run, every COMMIT would then fail
on the real topic, and after ``check_max`` checks the half would be rolled back although
the listener said COMMIT each time: a committed transaction would lose its message.

So, before the half: the real topic must exist (asked as any send asks: where the broker
auto-creates topics, the question creates it) and the committed record must fit its
``max.message.bytes``. The limit is read with the admin client and kept for
:data:`LIMIT_TTL_S`, so a limit an operator raises counts within a minute.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

from rmqcompat.config import ClientConfig
from rmqcompat.errors import MessageTooLargeError
from rmqcompat.message import Message
from rmqcompat.producer.failures import send_error
from rmqcompat.producer.topic_guard import TopicGuard
from rmqcompat.wire import OutgoingRecord

_log = logging.getLogger("rmqcompat.transaction")

#: Seconds a topic's ``max.message.bytes`` is kept before it is read again.
LIMIT_TTL_S = 60.0
#: A v2 record batch's header (Kafka's ``DefaultRecordBatch.RECORD_BATCH_OVERHEAD``).
BATCH_OVERHEAD = 61


def batch_bytes(record: OutgoingRecord) -> int:
    """The size of ``record`` alone in an uncompressed v2 record batch: what the broker
    compares with ``max.message.bytes``."""
    key = -1 if record.key is None else len(record.key)
    body = 3 + _varint_size(key) + max(key, 0)  # attributes, timestamp and offset deltas
    body += _varint_size(len(record.value)) + len(record.value)
    body += _varint_size(len(record.headers))
    for name, value in record.headers:
        encoded = name.encode("utf-8")
        size = -1 if value is None else len(value)
        body += _varint_size(len(encoded)) + len(encoded) + _varint_size(size) + max(size, 0)
    return BATCH_OVERHEAD + _varint_size(body) + body


def _varint_size(value: int) -> int:
    """Bytes of ``value`` as Kafka's zig-zag varint."""
    unsigned = (value << 1) ^ (value >> 63)
    size = 1
    while unsigned >= 0x80:
        unsigned >>= 7
        size += 1
    return size


class RealTopicCheck:
    """Refuses a transactional message its real topic could not take (see the module)."""

    def __init__(
        self,
        client: ClientConfig,
        timeout_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._guard = TopicGuard(client, {}, timeout_s)
        self._timeout_s = timeout_s
        self._clock = clock
        self._admin: AdminClient | None = None
        self._limits: dict[str, tuple[int, float]] = {}  # physical -> (limit, read at)

    def check(self, producer: Producer, msg: Message, committed: OutgoingRecord) -> None:
        """Raise unless ``committed`` (what a COMMIT of ``msg`` writes) can be delivered.

        Raises:
            FatalSendError: the real topic does not exist (``UNKNOWN_TOPIC_OR_PART``).
            MessageTooLargeError: the record is over the topic's ``max.message.bytes``.
        """
        missing = self._guard.missing(producer, committed.topic)
        if missing is not None:
            raise send_error(missing, msg, 1)
        limit = self._limit(committed.topic)
        size = batch_bytes(committed)
        if limit is not None and size > limit:
            raise MessageTooLargeError(
                f"the message would be {size} bytes on topic {msg.topic}, whose "
                f"max.message.bytes is {limit}: not sent, the local transaction did not run"
            )

    def _limit(self, physical: str) -> int | None:
        """The topic's ``max.message.bytes``; None if the broker did not say (the commit
        then meets the broker's own check, as before this one)."""
        kept = self._limits.get(physical)
        now = self._clock()
        if kept is not None and now - kept[1] < LIMIT_TTL_S:
            return kept[0]
        if self._admin is None:
            self._admin = AdminClient(self._client.librdkafka("admin"))
        resource = ConfigResource(ResourceType.TOPIC, physical)
        try:
            configs = self._admin.describe_configs([resource])[resource].result(self._timeout_s)
            limit = int(configs["max.message.bytes"].value)
        except (KafkaException, KeyError, ValueError, TimeoutError) as exc:
            _log.warning("max.message.bytes of %s unknown: %s", physical, exc)
            return None
        self._limits[physical] = (limit, now)
        return limit
