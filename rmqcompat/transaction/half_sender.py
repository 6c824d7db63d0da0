"""Stores half messages: an idempotent ``acks=all`` producer, one sync send at a time per
caller, bounded by ``send_msg_timeout``."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer

from rmqcompat.message import Message
from rmqcompat.producer.failures import as_kafka_error, send_error, timed_out
from rmqcompat.producer_id import new_idempotent_producer
from rmqcompat.wire import OutgoingRecord


class HalfSender:
    """Sends a half record and waits for the broker's acknowledgement."""

    def __init__(self, settings: Mapping[str, Any], timeout_s: float) -> None:
        self._settings = dict(settings)
        self._timeout_s = timeout_s
        self._producer: Producer | None = None

    def start(self) -> None:
        self._producer = new_idempotent_producer(self._settings)

    @property
    def producer(self) -> Producer:
        """The client (started): metadata questions about a real topic go through it."""
        assert self._producer is not None, "start() first"
        return self._producer

    def send(self, record: OutgoingRecord, msg: Message) -> tuple[int, int, int]:
        """Store ``record`` (the half of ``msg``); return its partition, offset, timestamp.

        Raises:
            RetriableSendError / FatalSendError: not stored (``msg`` handed back).
        """
        producer = self._producer
        assert producer is not None, "start() first"
        done = threading.Event()
        outcome: list[Any] = []

        def on_delivery(err: KafkaError | None, stored: Any) -> None:
            outcome.append(err if err is not None else stored)
            done.set()

        try:
            producer.produce(
                record.topic,
                record.value,
                key=record.key,
                headers=record.headers,  # type: ignore[arg-type]  # stub's list is invariant
                on_delivery=on_delivery,
            )
        except (KafkaException, BufferError) as exc:
            raise send_error(as_kafka_error(exc), msg, 1) from exc
        deadline = time.monotonic() + self._timeout_s
        while not done.is_set() and time.monotonic() < deadline:
            producer.poll(0.01)
        if not outcome:
            raise send_error(timed_out("half message not acknowledged in time"), msg, 1)
        result = outcome[0]
        if isinstance(result, KafkaError):
            raise send_error(result, msg, 1)
        return result.partition(), result.offset(), result.timestamp()[1]

    def close(self) -> None:
        producer, self._producer = self._producer, None
        if producer is not None:
            producer.flush(self._timeout_s)
