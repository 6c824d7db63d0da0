"""Closing librdkafka clients at shutdown without blocking for ever."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

from confluent_kafka import Consumer, Producer

_log = logging.getLogger("rmqcompat.closing")

#: how long a group member serves its own revoke before it closes regardless
LEAVE_TIMEOUT_S = 10.0
_LEAVE_POLL_S = 0.05


def close_producer(producer: Producer) -> None:
    """Drop what is still queued, serve the dropped records' reports, close the client.

    For producers whose records are never lost by dropping them: their source offset was
    not committed, so the record is produced again after a restart. Call it after the
    last bounded flush; ``Producer.close()`` alone would flush without a bound.
    """
    producer.purge()
    producer.poll(0)
    producer.close()


def close_group_member(
    consumer: Consumer, settings: Mapping[str, Any], timeout_s: float = LEAVE_TIMEOUT_S
) -> None:
    """Leave the consumer group while the client is still open, then close it.

    ``Consumer.close()`` serves a rebalance event that is still queued (a member joined
    or left while nobody polled) by calling the rebalance callback, and librdkafka 2.x
    can leave that callback's ``assign``/``unassign`` unanswered for ever once the group
    is terminating (librdkafka issue 4884; seen here as a shutdown hung in ``unassign``).
    Unsubscribing first and polling until the revoke was served leaves close() nothing
    to serve. Polled records are dropped: their offsets were never committed, so the
    partition's next owner reads them again. Call it on the thread that polls the
    consumer (or once that thread has ended); the rebalance callbacks run on it.
    ``settings`` are the consumer's own (its ``group.protocol`` decides what to wait for).
    """
    classic = str(settings.get("group.protocol", "classic")).lower() == "classic"
    try:
        consumer.unsubscribe()
        deadline = time.monotonic() + timeout_s
        consumer.poll(0)  # serves a rebalance event queued before the unsubscribe
        # The classic protocol: an empty assignment alone is not enough, for amid an eager
        # rebalance the assignment is empty while the new one is on its way and the
        # unsubscribe waits for it; librdkafka clears the member id only once the
        # unsubscribe took effect. The consumer protocol (KIP-848) keeps its member id.
        while consumer.assignment() or (classic and consumer.memberid() is not None):
            if time.monotonic() >= deadline:
                _log.warning("consumer still in its group %.0f s after leaving; closing", timeout_s)
                break
            consumer.poll(_LEAVE_POLL_S)
    except Exception:  # a fatal client error, or a rebalance callback raised
        _log.exception("leaving the consumer group failed; closing anyway")
    consumer.close()
