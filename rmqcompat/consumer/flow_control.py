"""Flow control thresholds (RocketMQ ``pullMessage``): when a partition stops being fetched."""

from __future__ import annotations

from rmqcompat.consumer.settings import ConsumerSettings
from rmqcompat.process_queue import ProcessQueue


def over_threshold(pq: ProcessQueue, settings: ConsumerSettings, orderly: bool) -> str | None:
    """Why ``pq`` must not be fetched now, or None.

    A queue is held back while it holds more than ``pull_threshold_for_queue`` messages,
    more than ``pull_threshold_size_for_queue`` MiB, or (concurrent consumption only, as
    in RocketMQ, whose orderly consumer takes messages strictly in order) spans more than
    ``consume_concurrently_max_span`` offsets between its first and last in-flight message.
    """
    if pq.count > settings.pull_threshold_for_queue:
        return f"{pq.count} messages > pull_threshold_for_queue"
    if pq.size_bytes > settings.threshold_size_bytes:
        return f"{pq.size_bytes} bytes > pull_threshold_size_for_queue"
    if not orderly and pq.count and pq.span > settings.consume_concurrently_max_span:
        return f"span {pq.span} > consume_concurrently_max_span"
    return None
