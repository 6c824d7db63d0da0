"""Small keyed topics (attempt logs, recalls): a write that waits, and whole reads.

:func:`write_and_wait` produces one record and waits for Kafka's acknowledgement. A
:class:`TopicReader`, outside any consumer group, is assigned every partition of its
topic from the start and hands each record's key, value and offset to its callback:
:meth:`catch_up` reads up to the ends the partitions have when it is called (blocking,
bounded); :meth:`poll` takes whatever arrived, without blocking. Never commits.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from functools import partial
from typing import Any

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka import Message as KafkaMessage

from rmqcompat.fetch import fetch
from rmqcompat.lookups import with_retries

#: Records taken per fetch.
_BATCH = 500

OnRecord = Callable[[bytes | None, bytes | None, int], None]


def write_and_wait(
    producer: Producer, topic: str, key: bytes, value: bytes | None, timeout_s: float
) -> str | None:
    """Produce one record and flush; None once Kafka acknowledged it, else why not."""
    failed: list[KafkaError] = []

    def on_delivery(err: KafkaError | None, _msg: KafkaMessage) -> None:
        if err is not None:
            failed.append(err)

    producer.produce(topic, value, key, on_delivery=on_delivery)
    if producer.flush(timeout_s) > 0:
        return "no acknowledgement in time"
    return str(failed[0]) if failed else None


class TopicReader:
    """See the module doc; ``on_record(key, value, offset)``; one thread at a time."""

    def __init__(
        self, settings: dict[str, Any], topic: str, on_record: OnRecord, timeout_s: float
    ) -> None:
        explicit = {
            "group.id": f"rmqcompat-reader-{uuid.uuid4().hex}",  # never joins nor commits
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
        self._consumer = Consumer({**settings, **explicit})
        self._topic = topic
        self._on_record = on_record
        self._timeout_s = timeout_s
        meta = self._consumer.list_topics(topic, timeout=timeout_s)
        self._partitions = sorted(meta.topics[topic].partitions)
        self._consumer.assign([TopicPartition(topic, p, 0) for p in self._partitions])

    def catch_up(self) -> bool:
        """Read up to the partitions' current ends; False if that took over the timeout.

        Raises: KafkaException (the watermarks could not be read).
        """
        ends: dict[int, int] = {}
        for p in self._partitions:
            low, high = with_retries(
                f"watermarks of {self._topic}[{p}]", partial(self._watermarks, p)
            )
            if high > low:
                ends[p] = high
        deadline = time.monotonic() + self._timeout_s
        while ends and not self._reached(ends):
            if time.monotonic() >= deadline:
                return False
            self._take(fetch(self._consumer, _BATCH, 0.1))
        return True

    def poll(self) -> None:
        """Take the records that arrived (never blocks)."""
        self._take(fetch(self._consumer, _BATCH, 0))

    def close(self) -> None:
        self._consumer.close()

    def _watermarks(self, partition: int) -> tuple[int, int]:
        tp = TopicPartition(self._topic, partition)
        low, high = self._consumer.get_watermark_offsets(tp, self._timeout_s, cached=False)
        return low, high

    def _take(self, messages: list[Any]) -> None:
        for msg in messages:
            if msg.error() is None:
                self._on_record(msg.key(), msg.value(), msg.offset())

    def _reached(self, ends: dict[int, int]) -> bool:
        positions = self._consumer.position([TopicPartition(self._topic, p) for p in ends])
        return all(tp.offset >= end for tp, end in zip(positions, ends.values(), strict=True))
