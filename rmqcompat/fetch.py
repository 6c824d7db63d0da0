"""Fetching a batch of records without waiting for the batch to fill up."""

from __future__ import annotations

from confluent_kafka import Consumer, Message


def fetch(consumer: Consumer, max_records: int, timeout_s: float) -> list[Message]:
    """Up to ``max_records`` records (or events), returning as soon as one is there.

    confluent-kafka's ``consume(n, timeout)`` waits until it holds ``n`` records or the
    timeout ends (measured: one record, ``consume(500, 3.0)`` returned after 3.0 s), so
    on a quiet topic a lone record would sit out the whole timeout. ``poll`` returns at
    the first record; whatever else is already fetched follows without waiting.
    """
    first = consumer.poll(timeout_s)
    if first is None:
        return []
    if max_records <= 1:
        return [first]
    return [first, *consumer.consume(max_records - 1, 0)]
