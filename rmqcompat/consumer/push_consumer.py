"""``DefaultMQPushConsumer``: RocketMQ's concurrent push consumer on Kafka."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient

from rmqcompat.broker_contact import BrokerContact
from rmqcompat.closing import close_group_member
from rmqcompat.config import ClientConfig
from rmqcompat.consumer.concurrent import ConcurrentConsumeService
from rmqcompat.consumer.consume_service import ConsumeService
from rmqcompat.consumer.dispatch import WorkerPool
from rmqcompat.consumer.engine import Engine
from rmqcompat.consumer.fetcher import Fetcher, new_fetcher
from rmqcompat.consumer.listener import (
    ConsumeFromWhere,
    MessageListenerOrderly,
    MessageModel,
    as_callable,
    check_listener_kind,
)
from rmqcompat.consumer.membership import Membership
from rmqcompat.consumer.offset_store import LocalFileOffsetStore
from rmqcompat.consumer.orderly import OrderlyConsumeService, orderly_policy
from rmqcompat.consumer.partitions import Partitions
from rmqcompat.consumer.sendback import RecordSink, SendBack
from rmqcompat.consumer.settings import ConsumerSettings
from rmqcompat.consumer.subscriptions import Subscriptions
from rmqcompat.consumer.unowned import UnownedWatch
from rmqcompat.consumer.wiring import (
    commit_writer,
    consumer_config,
    file_writer,
    internal_topology,
    kafka_group_id,
    producer_config,
)
from rmqcompat.errors import ClientStateError, RmqCompatError
from rmqcompat.lifecycle import Lifecycle
from rmqcompat.reachability import require_broker
from rmqcompat.topics.delay_levels import DEFAULT_MESSAGE_DELAY_LEVEL
from rmqcompat.topics.spec import TopologySpec
from rmqcompat.topics.topology import provision_topology
from rmqcompat.trace import Tracer

_log = logging.getLogger("rmqcompat.consumer")

#: The defaults of every setting live in one place, :class:`ConsumerSettings`.
_DEFAULTS = ConsumerSettings


class ConsumerFailedError(RmqCompatError):
    """The consumer's poll thread stopped on an error; the cause is chained."""


class DefaultMQPushConsumer(Lifecycle):
    """A push consumer of group ``group`` (RocketMQ 4.x settings, snake_case keywords).

    Concurrent by default: messages are handed to the listener in batches of
    ``consume_message_batch_max_size`` on ``consume_thread_max`` worker threads. A
    :class:`MessageListenerOrderly` makes it orderly: one call per partition at a time, in
    offset order, a failed batch retried in place (README, "Orderly consumption").
    Concurrently failed messages are sent back (delay ladder, then ``%DLQ%<group>``) in
    CLUSTERING, or logged and dropped in BROADCASTING. Delivery is at least once: a
    crash, a rebalance, a consume timeout or a failed send-back can hand a message to the
    listener again, never lose it. See :class:`ConsumerSettings` for every
    setting; ``consume_timeout`` is in minutes (or a ``timedelta``).

    The constructor, ``subscribe`` and ``register_message_listener`` do no I/O and raise
    ``ConfigError`` / ``InvalidNameError`` for bad input. ``start`` creates the missing
    internal topics (retry, DLQ, delay levels, quarantine; business topics are the user's)
    and may raise ``TopologyError``. ``shutdown`` blocks until running listeners finished
    (at most ``await_termination_s``) and offsets are committed; it raises
    ``ConsumerFailedError`` if the poll thread had died (:meth:`healthy` turned False).

    ``trace_enabled`` (default True, RocketMQ's message-trace switch) writes CONSUME,
    SEND_BACK, DEAD_LETTER and DISCARD trace events to the namespace's trace topic,
    asynchronously (``rmqcompat.trace``; drops counted in ``tracer.stats()``).
    """

    def __init__(
        self,
        group: str,
        bootstrap_servers: str,
        *,
        namespace: str = "",
        message_delay_level: str = DEFAULT_MESSAGE_DELAY_LEVEL,
        kafka_config: Mapping[str, Any] | None = None,
        message_model: MessageModel = _DEFAULTS.message_model,
        consume_from_where: ConsumeFromWhere = _DEFAULTS.consume_from_where,
        consume_timestamp_ms: int | None = _DEFAULTS.consume_timestamp_ms,
        consume_message_batch_max_size: int = _DEFAULTS.consume_message_batch_max_size,
        consume_thread_max: int = _DEFAULTS.consume_thread_max,
        max_reconsume_times: int = _DEFAULTS.max_reconsume_times,
        consume_timeout: float | timedelta = _DEFAULTS.consume_timeout,
        pull_threshold_for_queue: int = _DEFAULTS.pull_threshold_for_queue,
        pull_threshold_size_for_queue: float = _DEFAULTS.pull_threshold_size_for_queue,
        consume_concurrently_max_span: int = _DEFAULTS.consume_concurrently_max_span,
        persist_consumer_offset_interval: float = _DEFAULTS.persist_consumer_offset_interval,
        dead_letter: bool = _DEFAULTS.dead_letter,
        offset_store_dir: Path | str | None = _DEFAULTS.offset_store_dir,
        send_back_timeout_s: float = _DEFAULTS.send_back_timeout_s,
        send_back_failure_delay_s: float = _DEFAULTS.send_back_failure_delay_s,
        pull_batch_size: int = _DEFAULTS.pull_batch_size,
        await_termination_s: float = _DEFAULTS.await_termination_s,
        broadcast_rediscover_interval_s: float = _DEFAULTS.broadcast_rediscover_interval_s,
        young_queue_max_messages: int = _DEFAULTS.young_queue_max_messages,
        young_queue_max_age_s: float = _DEFAULTS.young_queue_max_age_s,
        broker_contact_timeout_s: float = _DEFAULTS.broker_contact_timeout_s,
        suspend_current_queue_time_millis: int = _DEFAULTS.suspend_current_queue_time_millis,
        topology: TopologySpec | None = None,
        trace_enabled: bool = True,
    ) -> None:
        client = ClientConfig(
            bootstrap_servers, namespace, message_delay_level, dict(kafka_config or {})
        )
        self.settings = ConsumerSettings(
            group,
            client,
            message_model=message_model,
            consume_from_where=consume_from_where,
            consume_timestamp_ms=consume_timestamp_ms,
            consume_message_batch_max_size=consume_message_batch_max_size,
            consume_thread_max=consume_thread_max,
            max_reconsume_times=max_reconsume_times,
            consume_timeout=consume_timeout,
            pull_threshold_for_queue=pull_threshold_for_queue,
            pull_threshold_size_for_queue=pull_threshold_size_for_queue,
            consume_concurrently_max_span=consume_concurrently_max_span,
            persist_consumer_offset_interval=persist_consumer_offset_interval,
            dead_letter=dead_letter,
            offset_store_dir=offset_store_dir,
            send_back_timeout_s=send_back_timeout_s,
            send_back_failure_delay_s=send_back_failure_delay_s,
            pull_batch_size=pull_batch_size,
            await_termination_s=await_termination_s,
            broadcast_rediscover_interval_s=broadcast_rediscover_interval_s,
            young_queue_max_messages=young_queue_max_messages,
            young_queue_max_age_s=young_queue_max_age_s,
            broker_contact_timeout_s=broker_contact_timeout_s,
            suspend_current_queue_time_millis=suspend_current_queue_time_millis,
        )
        self._topology = topology or TopologySpec()
        self.tracer = Tracer.for_client(client, group, enabled=trace_enabled)
        self._subs = Subscriptions(group, namespace)
        self._listener: Any = None
        self._orderly = False
        self._engine: Engine | None = None
        self._thread: threading.Thread | None = None
        self._consumer: Consumer | None = None
        self._consumer_config: dict[str, Any] = {}
        self._service: ConsumeService | None = None
        self._unowned: UnownedWatch | None = None
        self._error: BaseException | None = None
        self._contact: BrokerContact | None = None
        self._state = "created"

    def subscribe(self, topic: str, expression: str = "*") -> None:
        """Consume ``topic`` (a logical name, ``%DLQ%G`` too), filtered by tags ``expression``."""
        self._require("created", "subscribe")
        self._subs.add(topic, expression)

    def register_message_listener(self, listener: Any) -> None:
        """A callable ``(msgs, context) -> status`` or an object with ``consume_message``;
        a :class:`MessageListenerOrderly` makes the consumer orderly (README, "Orderly
        consumption")."""
        self._require("created", "register_message_listener")
        orderly = isinstance(listener, MessageListenerOrderly)
        check_listener_kind(listener, orderly)
        self._listener = as_callable(listener)
        self._orderly = orderly

    def _has_listener(self) -> bool:
        return self._listener is not None

    def start(self) -> None:
        """Create internal topics, join the group (or assign all partitions), consume.

        Raises:
            ClientStateError: not subscribed, no listener, or already started.
            ConfigError: librdkafka refused a ``kafka_config`` setting.
            BrokerUnreachableError: no broker answered within 10 s (nothing was created).
            TopologyError: the internal topics could not be created.
        """
        self._require("created", "start")
        if not self._has_listener() or not self._subs.filters:
            raise ClientStateError("subscribe() and register_message_listener() before start()")
        s = self.settings
        require_broker(s.client)
        if not s.broadcasting:
            self._subs.add_own_retry()
        provision_topology(
            s.client.librdkafka("admin"), internal_topology(s, self._topology, self._orderly)
        )
        self._contact = BrokerContact(s.broker_contact_timeout_s)
        consumer, fetcher, partitions, membership = self._connect(self._contact)
        sink = RecordSink(self._contact.observe(producer_config(s)))
        self._service = self._consume_service(sink, partitions, membership)
        self._engine = Engine(
            s,
            self._subs,
            consumer,
            sink,
            self._service,
            partitions,
            reconcile=lambda: membership.reconcile(consumer),
            rediscover=(lambda: membership.rediscover(consumer)) if s.broadcasting else None,
            rejoin=None if s.broadcasting else self._rejoin_check(consumer, membership),
            tracer=self.tracer,
            fetcher=fetcher,
        )
        self._thread = threading.Thread(
            target=self._run, name=f"rmqcompat-poll-{s.group}", daemon=True
        )
        self._state = "started"
        self.tracer.start()
        self._thread.start()

    def _rejoin_check(self, consumer: Consumer, membership: Membership) -> Callable[[], None]:
        """CLUSTERING: rejoin the group when a subscribed partition stays unowned
        (:mod:`rmqcompat.consumer.unowned`)."""
        s = self.settings
        admin = AdminClient(s.client.librdkafka("admin"))
        watch = UnownedWatch(admin, kafka_group_id(s), self._subs.physical_topics(), time.monotonic)
        self._unowned = watch

        def check() -> None:
            watch.rejoin_if_due(consumer, membership.subscribe)

        return check

    def _consume_service(
        self, sink: RecordSink, partitions: Partitions, membership: Membership
    ) -> ConsumeService:
        s = self.settings
        if self._orderly:
            sendback = SendBack(sink, orderly_policy(s), s.client.namespace, tracer=self.tracer)
            orderly = OrderlyConsumeService(
                s, self._listener, sendback, partitions, stopping=lambda: self._state != "started"
            )
            membership.before_revoke = orderly.release
            return orderly
        pool = WorkerPool(self._listener, s.group, s.consume_thread_max, time.monotonic)
        sendback = SendBack(sink, s.retry_policy(), s.client.namespace, tracer=self.tracer)
        return ConcurrentConsumeService(s, pool, sendback, partitions, time.monotonic)

    def _connect(self, contact: BrokerContact) -> tuple[Consumer, Fetcher, Partitions, Membership]:
        s = self.settings
        config = contact.observe(consumer_config(s))
        incremental = "cooperative" in str(
            s.client.kafka_config.get("partition.assignment.strategy", "")
        )
        consumer = Consumer(config)
        # the orderly service encodes its CONSUME events from the messages
        fetcher = new_fetcher(consumer, config, self.tracer.enabled and not self._orderly)
        if s.broadcasting:
            store = LocalFileOffsetStore(s.offset_file())
            partitions = Partitions(s, file_writer(store), self._orderly)
            m = Membership(s, self._subs, partitions, False)
            m.before_assign = fetcher.route
            m.assign_all(consumer, store.load())
        else:
            partitions = Partitions(s, commit_writer(consumer), self._orderly)
            m = Membership(s, self._subs, partitions, incremental)
            m.before_assign = fetcher.route
            m.subscribe(consumer)
        self._consumer, self._consumer_config = consumer, config
        return consumer, fetcher, partitions, m

    def _run(self) -> None:
        assert self._engine is not None
        try:
            self._engine.run()
        except BaseException as exc:  # the thread must record why it ended
            _log.exception("poll thread of group %s stopped; consuming halted", self.settings.group)
            self._error = exc

    def healthy(self) -> bool:
        """True while :meth:`unhealthy_reason` finds nothing wrong."""
        return self.unhealthy_reason() is None

    def unhealthy_reason(self) -> str | None:
        """Why the consumer is unhealthy, or None: not started, the poll thread stopped,
        a message is stuck (see :meth:`stuck_messages`), or no broker answered for
        ``broker_contact_timeout_s`` (healthy again once one does)."""
        thread, contact = self._thread, self._contact
        if self._state != "started" or thread is None or contact is None:
            return f"the consumer is {self._state}"
        if self._error is not None or not thread.is_alive():
            return f"the poll thread stopped: {self._error!r}"
        stuck = self.stuck_messages()
        if stuck:
            msg_id, cause = next(iter(stuck.items()))
            return f"{len(stuck)} message(s) stuck, e.g. {msg_id}: {cause}"
        return contact.unhealthy_reason()

    def stuck_messages(self) -> dict[str, str]:
        """Message id -> cause, for messages kept in flight and re-tried without success:
        refused by the retry path and the DLQ alike (retried every minute; each attempt
        logs an error), or whose send-back failed several times in a row (re-consumed
        locally meanwhile). An entry goes once the message is sent back or consumed."""
        if self._engine is None:
            return {}
        return self._engine.partitions.stuck()

    def shutdown(self) -> None:
        """Stop fetching, let running listeners finish, commit, leave the group.

        Raises:
            ConsumerFailedError: the poll thread had stopped on an error (cause chained).
        """
        if self._state != "started":
            return
        self._state = "stopped"
        assert self._engine is not None and self._thread is not None
        self._engine.stop()
        self._thread.join()
        if self._consumer is not None:
            if self.settings.broadcasting:
                self._consumer.close()
            else:
                close_group_member(self._consumer, self._consumer_config)
        if self._service is not None:
            self._service.shutdown()
        if self._unowned is not None:
            self._unowned.close()
        self.tracer.close()
        if self._error is not None:
            raise ConsumerFailedError(
                f"consumer of group {self.settings.group} failed: {self._error}"
            ) from self._error

    def stats(self) -> dict[tuple[str, int], dict[str, int | bool]]:
        """Per partition: in-flight count, bytes, span, paused, pauses, committed offset,
        stuck messages, and consume results: ``consume_ok`` / ``consume_failed`` (messages,
        by ackIndex) and ``consume_timeouts`` (listener calls of ``consume_timeout`` or
        longer, RocketMQ's TIME_OUT)."""
        return self._engine.partitions.stats() if self._engine else {}

    def _require(self, state: str, action: str) -> None:
        if self._state != state:
            raise ClientStateError(f"{action}() is not allowed once the consumer is {self._state}")
