"""``DelayForwarder``: the service that moves due parked records to their real topics.

See :mod:`rmqcompat.forwarder.worker` for the per-partition rules and
:mod:`rmqcompat.forwarder.settings` for the group and subscription.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from functools import partial
from typing import Any

from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient

from rmqcompat.broker_contact import DEFAULT_BROKER_CONTACT_TIMEOUT_S, BrokerContact
from rmqcompat.clock import Clock, epoch_ms
from rmqcompat.closing import close_group_member
from rmqcompat.config import ClientConfig
from rmqcompat.consumer.unowned import UnownedWatch
from rmqcompat.errors import ClientStateError, ConfigError, RmqCompatError
from rmqcompat.forwarder import settings as fs
from rmqcompat.forwarder.holding import DEFAULT_MAX_HELD, DEFAULT_MAX_HELD_BYTES, HoldLimits
from rmqcompat.forwarder.metrics import ForwarderMetrics, MetricsServer
from rmqcompat.forwarder.recalls import RecallReader
from rmqcompat.forwarder.worker import ForwardLoop, LoopSettings
from rmqcompat.lifecycle import Lifecycle
from rmqcompat.message import DEFAULT_MAX_MESSAGE_SIZE
from rmqcompat.producer_id import new_idempotent_producer
from rmqcompat.reachability import require_broker
from rmqcompat.topics.delay_levels import DEFAULT_MESSAGE_DELAY_LEVEL, level_topic_pattern
from rmqcompat.topics.naming import to_kafka_topic
from rmqcompat.topics.spec import TopologySpec
from rmqcompat.topics.topology import provision_topology
from rmqcompat.topics.verify_forwarding import unserved_level_topics
from rmqcompat.trace import Tracer

log = logging.getLogger(__name__)


class ForwarderFailedError(RmqCompatError):
    """The forwarder's poll thread stopped on an error; the cause is chained."""


class DelayForwarder(Lifecycle):
    """Delivers parked records when due, at least once, in order per level partition.

    All forwarders of a namespace share one consumer group (:func:`forwarder_group`), so
    running several spreads the level partitions over them. Guarantees: a record reaches
    its real topic no earlier than its due time, which is the broker's append time plus
    the level topic's delay (clocks: :mod:`rmqcompat.parking`; a due time beyond
    ``now + delay`` by more than a minute is a clock jump and counts as due now); its
    offset is committed only after the produce was acknowledged, so a crash or rebalance can
    forward a record again (a duplicate) but never lose it.

    Args:
        bootstrap_servers: Kafka bootstrap list.
        namespace: the deployment's namespace; must match its producers and consumers.
        message_delay_level: the delay table whose level topics it creates at start and
            through whose levels timer messages hop. It serves the level topics of every
            table in the namespace (pattern subscription), so clients may use other tables.
        kafka_config: librdkafka settings passed to the consumer, producer and admin client.
        metrics_port: serve ``/metrics`` and ``/health`` on this port (0 = any free port,
            see :attr:`metrics_port`); None serves nothing.
        metrics_host: interface to bind the metrics server to.
        topology: partitions and configs of the level and quarantine topics it creates.
        clock: epoch-milliseconds clock deciding what is due (injectable for tests).
        max_held_per_partition: records of a partition kept in memory while its head is
            not due; at this many the partition is paused and its fetch position moved
            back to the first record not held (size it to rate x delay).
        max_held_bytes_per_partition: the same cap in bytes (values + keys + headers held);
            whichever cap is reached first pauses the partition (:mod:`.holding`).
        max_message_size: the largest body the namespace's producers accept (as theirs);
            sizes the forwarder's producer and the topics it creates.
        broker_contact_timeout_s: unhealthy (:meth:`unhealthy_reason`, ``/health`` 503)
            after this long without a response from any broker to its consumer or
            producer (:mod:`rmqcompat.broker_contact`); healthy again when one
            answers.
        trace_enabled: write FORWARD and QUARANTINE trace events (``rmqcompat.trace``;
            asynchronous, never blocks forwarding).

    Raises:
        ConfigError, InvalidNameError: invalid settings (before any I/O).
    """

    def __init__(
        self,
        bootstrap_servers: str,
        *,
        namespace: str = "",
        message_delay_level: str = DEFAULT_MESSAGE_DELAY_LEVEL,
        kafka_config: Mapping[str, Any] | None = None,
        metrics_port: int | None = None,
        metrics_host: str = "127.0.0.1",
        topology: TopologySpec | None = None,
        clock: Clock = epoch_ms,
        max_held_per_partition: int = DEFAULT_MAX_HELD,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        max_held_bytes_per_partition: int = DEFAULT_MAX_HELD_BYTES,
        broker_contact_timeout_s: float = DEFAULT_BROKER_CONTACT_TIMEOUT_S,
        trace_enabled: bool = True,
    ) -> None:
        if not broker_contact_timeout_s > 0:
            raise ConfigError(
                f"broker_contact_timeout_s must be > 0, not {broker_contact_timeout_s}"
            )
        self._contact_timeout_s = broker_contact_timeout_s
        self._hold = HoldLimits(max_held_per_partition, max_held_bytes_per_partition)
        if metrics_port is not None and not 0 <= metrics_port <= 65535:
            raise ConfigError(f"metrics_port must be in 0..65535, not {metrics_port}")
        self.config = ClientConfig(
            bootstrap_servers,
            namespace,
            message_delay_level,
            kafka_config or {},
            max_message_size=max_message_size,
        )
        self.metrics = ForwarderMetrics()
        self.tracer = Tracer.for_client(
            self.config, "forwarder", enabled=trace_enabled, clock=clock
        )
        self.metrics.watch_trace(self.tracer.stats)
        self._topology = topology or TopologySpec()
        self._metrics_addr = (metrics_host, metrics_port)
        self._clock = clock
        self._loop: ForwardLoop | None = None
        self._consumer: Consumer | None = None
        self._consumer_settings: dict[str, Any] = {}
        self._unowned: UnownedWatch | None = None
        self._server: MetricsServer | None = None
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._contact: BrokerContact | None = None

    @property
    def group(self) -> str:
        return fs.forwarder_group(self.config.namespace)

    @property
    def metrics_port(self) -> int | None:
        """The port the metrics server listens on once started (None if not serving)."""
        return self._server.port if self._server else None

    def start(self) -> None:
        """Create missing level and quarantine topics, then forward on a background thread.

        A broker must answer within ``start_timeout_s`` (10 s), and the metrics port is
        bound, before any topic is created: a failed start leaves nothing behind.

        Raises:
            ClientStateError: already started.
            ConfigError: librdkafka refused a ``kafka_config`` setting.
            BrokerUnreachableError: no broker answered within ``start_timeout_s``.
            OSError: the metrics port cannot be bound.
            TopologyError: the topics could not be created.
        """
        if self._thread is not None:
            raise ClientStateError("DelayForwarder.start() was already called")
        require_broker(self.config)
        host, port = self._metrics_addr
        if port is not None:
            self._server = MetricsServer(
                self.metrics, self.healthy, host, port, reason=self.unhealthy_reason
            )
        try:
            admin_settings = self.config.librdkafka("admin")
            provision_topology(admin_settings, fs.internal_topology(self.config, self._topology))
            admin = AdminClient(admin_settings)
            namespace, group = self.config.namespace, self.group
            self.metrics.watch_unserved(lambda: unserved_level_topics(admin, namespace, group))
            self._loop = self._build_loop()
            level_topics = [to_kafka_topic(t, namespace) for t in self.config.levels.topics()]
            # the admin client of the unserved-topics metric (thread-safe) asks for it too
            self._unowned = UnownedWatch(admin, group, level_topics, time.monotonic)
        except BaseException:
            self.shutdown()
            raise
        self._thread = threading.Thread(target=self._run, name="rmqcompat-forwarder", daemon=True)
        self._thread.start()
        log.info(
            "delay-forwarder started: group %s, level topics %s",
            self.group,
            level_topic_pattern(self.config.namespace),
        )

    def _build_loop(self) -> ForwardLoop:
        loop_settings = LoopSettings(self.config.levels, self.config.namespace, hold=self._hold)
        contact = self._contact = BrokerContact(self._contact_timeout_s)
        self._consumer_settings = contact.observe(fs.consumer_settings(self.config))
        self._consumer = Consumer(self._consumer_settings)
        producer = new_idempotent_producer(contact.observe(fs.producer_settings(self.config)))
        recalls = RecallReader(self.config)
        loop = ForwardLoop(
            self._consumer, producer, loop_settings, self.metrics, self._clock, self.tracer, recalls
        )
        self._subscribe(self._consumer, loop)
        return loop

    def _subscribe(self, consumer: Consumer, loop: ForwardLoop) -> None:
        consumer.subscribe(
            [level_topic_pattern(self.config.namespace)],
            on_assign=loop.on_assign,
            on_revoke=loop.on_revoke,
            on_lost=loop.on_lost,
        )

    def _run(self) -> None:
        loop, consumer, unowned = self._loop, self._consumer, self._unowned
        # set by start() before the thread
        assert loop is not None and consumer is not None and unowned is not None
        resubscribe = partial(self._subscribe, loop=loop)
        self.tracer.start()
        try:
            while not loop.stopping:
                loop.step()
                # a level partition no forwarder owns (rmqcompat.consumer.unowned)
                unowned.rejoin_if_due(consumer, resubscribe)
            loop.close()
        except BaseException as exc:  # the thread must record why it ended
            log.exception("delay-forwarder stopped on an error")
            self._error = exc
        finally:
            loop.stopping = True
            unowned.close()
            close_group_member(consumer, self._consumer_settings)
            loop.close_recalls()
            loop.close_producer()
            self.tracer.close()

    def healthy(self) -> bool:
        """True while :meth:`unhealthy_reason` finds nothing wrong."""
        return self.unhealthy_reason() is None

    def unhealthy_reason(self) -> str | None:
        """Why the forwarder is unhealthy, or None: not running, not assigned yet (or
        stopping), or no broker answered for ``broker_contact_timeout_s``."""
        thread, loop, contact = self._thread, self._loop, self._contact
        if thread is None or loop is None or contact is None or not thread.is_alive():
            return f"not running: {self._error!r}" if self._error else "not running"
        if loop.stopping:
            return "stopping"
        if not loop.assigned:
            return "no partition assignment from the group yet"
        return contact.unhealthy_reason()

    def request_stop(self) -> None:
        """Ask the poll thread to stop; safe from signal handlers and other threads."""
        if self._loop is not None:
            self._loop.stopping = True

    def shutdown(self, timeout_s: float | None = None) -> None:
        """Stop, wait for in-flight produces, commit what was delivered, leave the group.

        Raises:
            ForwarderFailedError: the poll thread had stopped on an error.
        """
        self.request_stop()
        if self._thread is not None:
            self._thread.join(timeout_s)
        if self._server is not None:
            self._server.close()
            self._server = None
        if self._error is not None:
            raise ForwarderFailedError(f"delay-forwarder failed: {self._error}") from self._error

    def run_forever(self) -> None:
        """Start and block until :meth:`request_stop` (e.g. from a signal handler) or an error."""
        self.start()
        assert self._thread is not None
        self._thread.join()
        self.shutdown()
