"""Recalling a delayed (timer) message before it is due, as RocketMQ 5.5 does.

The ``SendReceipt`` of a DELAY message carries a recall handle: upstream's v1 format,
``base64url("v1 <topic> <broker name> <delivery epoch ms> <message id>")``. A recall
checks the handle as the broker does, then writes one record (key = message id, value =
delivery ms) to ``RMQ_SYS_RECALL_TOPIC``, which every delay forwarder reads
(:mod:`rmqcompat.forwarder.recalls`): the forwarder drops the message instead of
delivering it.

Upstream's answers, through the proxy (``INTERNAL_SERVER_ERROR``, 50001, with the
broker's text): an undecodable handle -> "recall handle is invalid"; another topic ->
"recall failed, topic not match"; another broker -> "recall failed, broker service not
available"; a delivery time already past (the message was delivered, or it was never a
timer message) -> "recall failed, timestamp invalid". A well-formed handle nobody issued
is accepted (the broker writes the delete marker all the same) and its id returned.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from rmqcompat.config import ClientConfig
from rmqcompat.keyed_topic import write_and_wait
from rmqcompat.producer.settings import TIMER_MAX_DELAY_SEC
from rmqcompat.producer_id import new_idempotent_producer
from rmqcompat.topics.naming import RECALL_TOPIC, to_kafka_topic
from rmqcompat.topics.topology import provision_topology, system_topology
from rmqcompat.v5.exceptions import (
    INTERNAL_SERVER_ERROR,
    PROXY_TIMEOUT,
    InternalErrorException,
    ProxyTimeoutException,
)

_VERSION = "v1"


@dataclass(frozen=True)
class RecallHandle:
    topic: str
    broker_name: str
    deliver_ms: int
    message_id: str


def encode_handle(topic: str, broker_name: str, deliver_ms: int, message_id: str) -> str:
    raw = " ".join((_VERSION, topic, broker_name, str(deliver_ms), message_id))
    return base64.urlsafe_b64encode(raw.encode()).decode()


def _refused(text: str) -> InternalErrorException:
    return InternalErrorException(text, INTERNAL_SERVER_ERROR)


def decode_handle(handle: object) -> RecallHandle:
    """Raises InternalErrorException (50001) "recall handle is invalid"."""
    if not isinstance(handle, str) or not handle:
        raise _refused("recall handle is invalid")
    try:
        raw = base64.urlsafe_b64decode(handle.encode()).decode()
    except (binascii.Error, UnicodeError, ValueError):
        raise _refused("recall handle is invalid") from None
    items = raw.split(" ")
    if items[0] != _VERSION or len(items) < 5:
        raise _refused("recall handle is invalid")
    try:
        deliver_ms = int(items[3])
    except ValueError:
        deliver_ms = -1  # the broker reads an unparsable time as -1: "timestamp invalid"
    return RecallHandle(items[1], items[2], deliver_ms, items[4])


def checked(handle: str, topic: str, broker_name: str, now_ms: int) -> RecallHandle:
    """The handle, if the broker would accept its recall now (see the module doc)."""
    parsed = decode_handle(handle)
    if parsed.topic != topic:
        raise _refused("recall failed, topic not match")
    if parsed.broker_name != broker_name:
        raise _refused("recall failed, broker service not available")
    left = parsed.deliver_ms - now_ms
    if left <= 0 or left >= TIMER_MAX_DELAY_SEC * 1000:
        raise _refused("recall failed, timestamp invalid")
    return parsed


class RecallWriter:
    """Writes recall records (creates the recall topic when missing)."""

    def __init__(self, client: ClientConfig, timeout_s: float) -> None:
        provision_topology(
            client.librdkafka("admin"),
            system_topology(
                RECALL_TOPIC, namespace=client.namespace, max_message_size=client.max_message_size
            ),
        )
        self._topic = to_kafka_topic(RECALL_TOPIC, client.namespace)
        self._timeout_s = timeout_s
        self._producer = new_idempotent_producer(
            client.librdkafka("producer", **{"acks": "all", "enable.idempotence": True})
        )

    def write(self, handle: RecallHandle) -> None:
        """Raises ProxyTimeoutException (50400): Kafka did not take it in time."""
        key, value = handle.message_id.encode(), str(handle.deliver_ms).encode()
        failure = write_and_wait(self._producer, self._topic, key, value, self._timeout_s)
        if failure is not None:
            raise ProxyTimeoutException(f"recall not written: {failure}", PROXY_TIMEOUT)
