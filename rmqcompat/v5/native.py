"""The core push consumer one 5.x consumer runs per subscribed topic.

RocketMQ 5 consumers subscribe and unsubscribe while running; rmqcompat's core consumer
takes its subscriptions before ``start``. So a 5.x consumer runs one core consumer per
topic, all in the consumer group: Kafka shares each topic's partitions among the members
that subscribe to it, and every member also reads the group's ``%RETRY%`` topic (with
``*``), so a retried message reaches the 5.x consumer through whichever member gets it.
Subscribing starts one more; unsubscribing shuts one down.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from rmqcompat.consumer import DefaultMQPushConsumer
from rmqcompat.consumer.consume_service import ConsumeService
from rmqcompat.consumer.dispatch import Pool, WorkerPool
from rmqcompat.consumer.membership import Membership
from rmqcompat.consumer.partitions import Partitions
from rmqcompat.consumer.sendback import RecordSink, SendBack
from rmqcompat.errors import RmqCompatError
from rmqcompat.v5.config import ClientConfiguration
from rmqcompat.v5.exceptions import translate
from rmqcompat.v5.held_pool import HeldPool
from rmqcompat.v5.lanes import LaneService, LostAttempts

#: RocketMQ 5's default max delivery attempts of a group (retry max times 16, plus 1).
DEFAULT_MAX_ATTEMPTS = 17

#: The core's consume timeout (RocketMQ's ``cleanExpireMsg``) must never fire for a
#: message a 5.x consumer holds: the lease decides. Longer than any invisible time.
_HOLD_LIMIT = timedelta(days=7)


#: A held FIFO head (or a held SimpleConsumer message) pauses its partition for its
#: neighbours once they are this many offsets ahead (RocketMQ's
#: ``consumeConcurrentlyMaxSpan``, default 2000): the widest span the core accepts.
_WIDEST_SPAN = 65535


class LaneConsumer(DefaultMQPushConsumer):
    """The core push consumer with FIFO lanes (:mod:`rmqcompat.v5.lanes`) and, when
    given, the attempts lost by members that died (``lost_attempts``) and a SimpleConsumer's
    hand-over in place of listener threads (``held_pool``)."""

    lost_attempts: LostAttempts | None = None
    held_pool: HeldPool | None = None

    def _has_listener(self) -> bool:
        return self.held_pool is not None or super()._has_listener()

    def _consume_service(
        self, sink: RecordSink, partitions: Partitions, membership: Membership
    ) -> ConsumeService:
        s = self.settings
        pool: Pool = self.held_pool or WorkerPool(
            self._listener, s.group, s.consume_thread_max, time.monotonic
        )
        policy = replace(s.retry_policy(), receipt_handles=True)
        sendback = SendBack(sink, policy, s.client.namespace, tracer=self.tracer)
        service = LaneService(s, pool, sendback, partitions, time.monotonic)
        service.lost_attempts = self.lost_attempts
        return service


@dataclass(frozen=True)
class CoreLimits:
    """What a 5.x consumer asks of each of its core consumers: listener threads, the
    group's max delivery attempts, and the messages (count, MiB) cached per partition
    before it pauses (the core's ``pull_threshold_for_queue`` / ``_size_for_queue``)."""

    threads: int
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    cache_count: int = 1000
    cache_mib: float = 100.0


def core_consumer(
    config: ClientConfiguration,
    group: str,
    topic: str,
    tag_expression: str,
    listener: Any,
    limits: CoreLimits,
    lost_attempts: LostAttempts | None = None,
) -> LaneConsumer:
    """A subscribed, not yet started core consumer for ``topic`` in ``group``;
    ``listener`` is a core listener or a SimpleConsumer's :class:`HeldPool`.

    Raises:
        IllegalArgumentException: a bad group, topic or expression (no I/O).
    """
    client = config.client
    try:
        consumer = LaneConsumer(
            group,
            client.bootstrap_servers,
            **config.core_settings(),
            consume_thread_max=limits.threads,
            max_reconsume_times=limits.max_attempts - 1,
            pull_threshold_for_queue=limits.cache_count,
            pull_threshold_size_for_queue=limits.cache_mib,
            consume_timeout=_HOLD_LIMIT,
            consume_concurrently_max_span=_WIDEST_SPAN,
        )
        consumer.subscribe(topic, tag_expression)
        if isinstance(listener, HeldPool):
            consumer.held_pool = listener
        else:
            consumer.register_message_listener(listener)
        consumer.lost_attempts = lost_attempts
    except RmqCompatError as exc:
        raise translate(exc) from exc
    return consumer
