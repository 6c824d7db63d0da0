"""Broker lookups that Apache Kafka may refuse for a moment, asked again a few times.

Apache Kafka answers NOT_LEADER_FOR_PARTITION for a moment after a topic was created even
once its metadata names a leader (seen in the consume benchmark's first lookup), and took
over 0.6 s to serve ListOffsets for a topic it had just created; a timed-out lookup may
also succeed the next time.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from confluent_kafka import KafkaException

_log = logging.getLogger("rmqcompat")

#: Lookups (committed offsets, watermarks) are asked this often before the caller gives up
#: (a consumer then lets librdkafka pick the start): about 3 s of retries with the pauses
#: below.
LOOKUP_ATTEMPTS = 6
#: Pause before the n-th retry: n x this.
_RETRY_PAUSE_S = 0.2

_T = TypeVar("_T")


def with_retries(what: str, lookup: Callable[[], _T]) -> _T:
    """``lookup()``, tried up to :data:`LOOKUP_ATTEMPTS` times (raises the last
    KafkaException when all fail)."""
    attempt = 1
    while True:
        try:
            return lookup()
        except KafkaException as exc:
            if attempt >= LOOKUP_ATTEMPTS:
                raise
            _log.warning("%s failed (attempt %d): %s", what, attempt, exc)
            time.sleep(_RETRY_PAUSE_S * attempt)
            attempt += 1
