"""``DefaultMQProducer``: RocketMQ's producer API on a confluent-kafka producer."""

from __future__ import annotations

import enum
import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

from confluent_kafka import KafkaException

from rmqcompat.clock import Clock, epoch_ms
from rmqcompat.config import ClientConfig, mask_secrets
from rmqcompat.errors import ClientStateError, ConfigError
from rmqcompat.lifecycle import Lifecycle
from rmqcompat.message import DEFAULT_MAX_MESSAGE_SIZE, Message
from rmqcompat.producer.failures import Backoff
from rmqcompat.producer.pending import PendingSend
from rmqcompat.producer.pipeline import Pipeline
from rmqcompat.producer.records import ShardingKey
from rmqcompat.producer.resend import Resender
from rmqcompat.producer.send_future import SendFuture
from rmqcompat.producer.send_result import SendResult
from rmqcompat.producer.settings import TIMER_MAX_DELAY_SEC, ProducerSettings
from rmqcompat.producer.spool import Spool
from rmqcompat.producer.submission import SendCallback, Submitter
from rmqcompat.producer.topic_guard import TopicGuard
from rmqcompat.reachability import require_broker
from rmqcompat.topics.delay_levels import DEFAULT_MESSAGE_DELAY_LEVEL
from rmqcompat.topics.spec import TopologySpec
from rmqcompat.topics.topology import delay_topology
from rmqcompat.trace import Tracer

log = logging.getLogger(__name__)


class _State(enum.Enum):
    CREATED = "created"
    RUNNING = "running"
    STOPPED = "stopped"


class DefaultMQProducer(Lifecycle):
    """Sends RocketMQ messages to Kafka with RocketMQ's retry settings, never losing one silently.

    Every send ends in exactly one outcome: a ``SendResult`` (``SEND_OK``, or ``SPOOLED`` when
    ``spool_dir`` is set and retriable failures outlasted the retries) or a ``SendError``
    carrying the original message (``RetriableSendError``: busy, throttled, queue full,
    timed out, unreachable; ``FatalSendError``: refused for good, at once, no retries).

    Retries: librdkafka retries busy/throttling/leader-change errors itself, idempotently,
    for up to ``send_msg_timeout`` per attempt (``message.timeout.ms``). On top of that a
    sync send makes up to ``1 + retry_times_when_send_failed`` attempts while its overall
    ``send_msg_timeout`` lasts; an async or oneway send up to
    ``1 + retry_times_when_send_async_failed`` attempts. A retry after a timeout may
    duplicate a record the broker did store (at-least-once, like RocketMQ).

    Time bounds: ``send`` returns or raises within ``send_msg_timeout`` plus a few
    milliseconds of thread hand-over (plus one spool write when ``spool_dir`` is set), also
    while the broker is unreachable; metadata and level-topic requests share that budget.
    ``start()`` waits at most ``send_msg_timeout`` for a broker to answer.

    The constructor does no I/O; ``start()`` checks the broker and creates the client,
    ``shutdown()`` waits for every pending send's outcome. Settings errors raise ``ConfigError`` or
    ``InvalidNameError``. Callbacks and futures are completed on the producer's threads:
    keep callbacks short. One producer per ``spool_dir``.

    ``trace_enabled`` (default True, RocketMQ's message-trace switch) writes a ``PUBLISH``
    trace event per acknowledged send to the namespace's trace topic, asynchronously
    (``rmqcompat.trace``: never blocks a send; drops are counted in ``tracer.stats()``).
    """

    def __init__(
        self,
        group: str,
        bootstrap_servers: str,
        *,
        namespace: str = "",
        message_delay_level: str = DEFAULT_MESSAGE_DELAY_LEVEL,
        kafka_config: Mapping[str, Any] | None = None,
        retry_times_when_send_failed: int = 2,
        retry_times_when_send_async_failed: int = 2,
        send_msg_timeout: int = 3000,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        spool_dir: str | None = None,
        spool_resend_interval_s: float | None = 30.0,
        timer_max_delay_sec: int = TIMER_MAX_DELAY_SEC,
        connect_on_start: bool = True,
        topology: TopologySpec | None = None,
        backoff: Backoff | None = None,
        clock_ms: Clock = epoch_ms,
        trace_enabled: bool = True,
    ) -> None:
        client = ClientConfig(
            bootstrap_servers=bootstrap_servers,
            namespace=namespace,
            message_delay_level=message_delay_level,
            kafka_config=kafka_config or {},
            max_message_size=max_message_size,
        )
        self.settings = ProducerSettings(
            group,
            client,
            retry_times_when_send_failed,
            retry_times_when_send_async_failed,
            send_msg_timeout,
            spool_resend_interval_s,
            timer_max_delay_sec,
        )
        self._connect_on_start = connect_on_start
        self.spool = Spool(spool_dir) if spool_dir is not None else None
        timeout_s = send_msg_timeout / 1000.0
        # Level topics must hold the largest body this producer accepts (Kafka: ~1 MiB).
        parking = delay_topology(
            levels=client.levels,
            spec=topology,
            namespace=namespace,
            max_message_size=max_message_size,
        )
        self._topics = TopicGuard(client, parking.specs(), timeout_s)
        # RocketMQ's message-trace switch: PUBLISH events to the namespace's trace topic
        self.tracer = Tracer.for_client(client, group, enabled=trace_enabled, clock=clock_ms)
        self._pipeline = Pipeline(
            self.settings.librdkafka(),
            queue_wait_s=timeout_s,
            backoff=backoff or Backoff(),
            spool=self.spool,
            clock_ms=clock_ms,
            tracer=self.tracer,
        )
        self._resender = Resender(
            self._pipeline,
            self.spool,
            attempts=1 + retry_times_when_send_async_failed,
            interval_s=spool_resend_interval_s,
        )
        self._submitter = Submitter(
            self.settings.client, self._topics, self._pipeline, clock_ms, timer_max_delay_sec * 1000
        )
        self._async_attempts = 1 + retry_times_when_send_async_failed
        self._state = _State.CREATED
        self._state_lock = threading.Lock()

    @property
    def group(self) -> str:
        return self.settings.group

    @property
    def namespace(self) -> str:
        return self.settings.client.namespace

    def __repr__(self) -> str:
        client = self.settings.client
        return (
            f"DefaultMQProducer(group={self.group!r}, bootstrap_servers="
            f"{client.bootstrap_servers!r}, namespace={client.namespace!r}, "
            f"kafka_config={mask_secrets(client.kafka_config)!r}, state={self._state.value})"
        )

    def start(self) -> None:
        """Check that a broker answers, then create the Kafka client and background threads.

        With ``connect_on_start=False`` nothing waits for the broker: the clients ask for
        their producer ids in the background, and sends made while it is away retry and
        then fail or spool as usual.

        Raises:
            ClientStateError: already started or shut down.
            ConfigError: librdkafka refused the settings.
            BrokerUnreachableError: no broker answered within ``send_msg_timeout``.
        """
        with self._state_lock:
            if self._state is not _State.CREATED:
                raise ClientStateError(f"producer {self.group} cannot start: {self._state.value}")
            if self._connect_on_start:
                require_broker(self.settings.client, self.settings.send_msg_timeout / 1000.0)
            try:
                self._pipeline.start()
            except KafkaException as exc:
                raise ConfigError(f"librdkafka refused the producer settings: {exc}") from exc
            if self._connect_on_start:
                self._pipeline.connect()
            else:  # the broker may be away: start() does not wait for its answer
                self._pipeline.connect_in_background()
            self._state = _State.RUNNING
        self.tracer.start()
        self._resender.start()

    def shutdown(self) -> None:
        """Stop accepting sends and block until every pending send has its outcome.

        Pending sends end delivered, spooled, or failed with their future/callback told.
        Idempotent; a producer never started just becomes unusable.
        """
        with self._state_lock:
            was_running = self._state is _State.RUNNING
            self._state = _State.STOPPED
        if was_running:
            self._resender.stop()
            self._pipeline.close()
            self.tracer.close()

    def send(self, msg: Message, sharding_key: ShardingKey = None) -> SendResult:
        """Send and block until acknowledged, spooled, or failed, within ``send_msg_timeout``.

        A send that timed out may still be delivered by a late attempt (a duplicate if sent
        again), as with RocketMQ.

        Args:
            msg: the message; ``delay_time_level``/``deliver_time_ms`` park it (section 5).
            sharding_key: becomes the Kafka key: equal keys land on the same partition.

        Raises:
            ClientStateError: not started or already shut down.
            InvalidNameError, MessageTooLargeError, InvalidMessageError, ConfigError: bad
                input, before any I/O (``InvalidMessageError`` also for a ``deliver_time_ms``
                more than ``timer_max_delay_sec`` ahead).
            RetriableSendError: retriable failures outlasted the retries (no spool).
            FatalSendError: the broker refused the message (also a missing topic).
        """
        deadline = time.monotonic() + self.settings.send_msg_timeout / 1000.0
        attempts = 1 + self.settings.retry_times_when_send_failed
        return self._pipeline.wait(self._submit(msg, sharding_key, attempts, deadline))

    def send_orderly(self, msg: Message, sharding_key: ShardingKey) -> SendResult:
        """:meth:`send` with a required sharding key (same key -> same partition, in order).

        Raises:
            ConfigError: ``sharding_key`` is empty; plus everything :meth:`send` raises.
        """
        if not sharding_key:
            raise ConfigError("send_orderly needs a non-empty sharding_key")
        return self.send(msg, sharding_key)

    def send_async(
        self,
        msg: Message,
        callback: SendCallback | None = None,
        sharding_key: ShardingKey = None,
    ) -> SendFuture:
        """Send without waiting for the broker; the future gets the one outcome.

        The returned :class:`SendFuture` has ``Future``'s methods (a send cannot be
        cancelled: ``cancel()`` returns False); ``as_future()`` gives a genuine
        ``concurrent.futures.Future`` for ``wait``/``as_completed``/``asyncio``.
        ``callback(result_or_exception)`` runs exactly once, on a producer thread, before
        callbacks added to the future. Blocks only while librdkafka's local queue is full
        (backpressure, at most ``send_msg_timeout``) and the first time a topic is seen (a
        metadata request).

        Raises:
            ClientStateError, InvalidNameError, MessageTooLargeError, ConfigError: as
                :meth:`send`, before any I/O. Send failures go to the future instead.
        """
        if sharding_key is None and self._state is _State.RUNNING:
            pending = self._submitter.plain(msg, self._async_attempts, callback)
            if pending is not None:
                return pending
        return self._submit(msg, sharding_key, self._async_attempts, None, callback)

    def send_oneway(self, msg: Message, sharding_key: ShardingKey = None) -> None:
        """Fire and forget: like :meth:`send_async`; a final failure is logged (and spooled
        when retriable and ``spool_dir`` is set), never silently dropped."""
        self.send_async(msg, _log_oneway_failure, sharding_key)

    def resend_spooled(self) -> tuple[int, int]:
        """Re-send every spooled message once (with the async retries); block until done.

        Returns:
            (sent, still_failed): entries acknowledged (and deleted) and entries kept.

        Raises:
            ClientStateError: not running. ConfigError: no ``spool_dir``.
        """
        self._check_running()
        return self._resender.resend_all()

    def _check_running(self) -> None:
        if self._state is not _State.RUNNING:
            raise ClientStateError(f"producer {self.group} is {self._state.value}, not running")

    def _submit(
        self,
        msg: Message,
        key: ShardingKey,
        attempts: int,
        deadline: float | None,
        callback: SendCallback | None = None,
    ) -> PendingSend:
        if self._state is not _State.RUNNING:
            self._check_running()
        return self._submitter.submit(msg, key, attempts, deadline, callback)


def _log_oneway_failure(outcome: SendResult | BaseException) -> None:
    if isinstance(outcome, BaseException):
        log.error("oneway send failed and was not spooled: %s", outcome)
