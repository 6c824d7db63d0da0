"""One ``kafka_config`` for every client: keep only what each kind of librdkafka client reads.

Users pass one passthrough dict to a consumer, which also runs a producer (send-back) and
an admin client (topic creation). librdkafka warns about every setting that belongs to the
other kind of client, so each client gets the shared settings plus its own kind's.
Names follow librdkafka's CONFIGURATION.md (its C/P column).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

ClientKind = Literal["consumer", "producer", "admin"]

CONSUMER_ONLY = frozenset(
    {
        "group.id",
        "group.instance.id",
        "group.protocol",
        "group.remote.assignor",
        "partition.assignment.strategy",
        "session.timeout.ms",
        "heartbeat.interval.ms",
        "coordinator.query.interval.ms",
        "max.poll.interval.ms",
        "enable.auto.commit",
        "auto.commit.interval.ms",
        "enable.auto.offset.store",
        "auto.offset.reset",
        "queued.min.messages",
        "queued.max.messages.kbytes",
        "fetch.wait.max.ms",
        "fetch.queue.backoff.ms",
        "fetch.message.max.bytes",
        "max.partition.fetch.bytes",
        "fetch.max.bytes",
        "fetch.min.bytes",
        "fetch.error.backoff.ms",
        "isolation.level",
        "enable.partition.eof",
        "check.crcs",
        "consume.callback.max.messages",
        "on_commit",
    }
)

PRODUCER_ONLY = frozenset(
    {
        "transactional.id",
        "transaction.timeout.ms",
        "enable.idempotence",
        "enable.gapless.guarantee",
        "queue.buffering.max.messages",
        "queue.buffering.max.kbytes",
        "queue.buffering.max.ms",
        "linger.ms",
        "message.send.max.retries",
        "retries",
        "queue.buffering.backpressure.threshold",
        "compression.codec",
        "compression.type",
        "compression.level",
        "batch.num.messages",
        "batch.size",
        "delivery.report.only.error",
        "sticky.partitioning.linger.ms",
        "acks",
        "request.required.acks",
        "request.timeout.ms",
        "message.timeout.ms",
        "delivery.timeout.ms",
        "partitioner",
        "on_delivery",
    }
)

_FOREIGN: dict[ClientKind, frozenset[str]] = {
    "consumer": PRODUCER_ONLY,
    "producer": CONSUMER_ONLY,
    "admin": CONSUMER_ONLY | PRODUCER_ONLY,
}


def for_client(settings: Mapping[str, Any], kind: ClientKind) -> dict[str, Any]:
    """The part of ``settings`` that a ``kind`` client reads (unknown names are kept)."""
    foreign = _FOREIGN[kind]
    return {name: value for name, value in settings.items() if name not in foreign}
