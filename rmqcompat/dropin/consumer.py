"""The drop-in ``PushConsumer``: upstream's API on :class:`rmqcompat.DefaultMQPushConsumer`."""

from __future__ import annotations

from rmqcompat.consumer import ConsumerSettings, DefaultMQPushConsumer
from rmqcompat.consumer import MessageModel as NativeModel
from rmqcompat.dropin.base import ClientBase
from rmqcompat.dropin.callbacks import (
    Callback,
    ConcurrentCallbacks,
    OrderlyCallbacks,
    TopicCallbacks,
)
from rmqcompat.dropin.enums import MessageModel
from rmqcompat.dropin.message import Text, text
from rmqcompat.errors import ConfigError, RmqCompatError
from rmqcompat.exceptions import ConsumerException, PushConsumerStartFailed, wrap


class PushConsumer(ClientBase):
    """``PushConsumer(group_id, orderly=False, message_model=MessageModel.CLUSTERING)``.

    ``subscribe(topic, callback, expression='*')`` gives each topic its own callback
    (upstream's C client keeps only the last one registered, which also takes messages of
    a topic without a callback, such as a retry of a topic no longer subscribed). Failed
    messages are retried on RocketMQ's delay ladder through ``%RETRY%<group>``, which
    needs a delay forwarder running (``rmqcompat forwarder run``: on RocketMQ the broker
    does it). ``orderly=True`` consumes each partition in order, one message per call as
    the C client does (``set_message_batch_max_size`` is for concurrent consumption),
    and retries a failed message in place after 1 s (5 s once it failed 16 times).
    Settings apply at ``start()``.
    """

    def __init__(
        self,
        group_id: Text,
        orderly: bool = False,
        message_model: MessageModel = MessageModel.CLUSTERING,
    ) -> None:
        super().__init__(group_id)
        self.orderly = bool(orderly)
        self._model = NativeModel.CLUSTERING
        self._subscriptions: dict[str, tuple[str, Callback]] = {}
        self._threads: int | None = None
        self._batch: int | None = None
        self._native: DefaultMQPushConsumer | None = None
        self.set_message_model(message_model)

    def set_message_model(self, model: MessageModel) -> None:
        self._setting("set_message_model")
        try:
            self._model = NativeModel[MessageModel(model).name]
        except ValueError:
            raise ConfigError(f"message model must be a MessageModel, not {model!r}") from None

    def set_thread_count(self, thread_count: int) -> None:
        """Listener threads (``consume_thread_max``)."""
        self._setting("set_thread_count")
        self._threads = thread_count

    def set_message_batch_max_size(self, max_size: int) -> None:
        """Messages per listener call (``consume_message_batch_max_size``) of concurrent
        consumption; upstream's callback still gets them one at a time. Orderly
        consumption takes one message per call whatever this says (as the C client)."""
        self._setting("set_message_batch_max_size")
        self._batch = max_size

    def subscribe(self, topic: Text, callback: Callback, expression: Text = "*") -> None:
        """Consume ``topic`` messages whose tags match ``expression`` with ``callback``."""
        self._setting("subscribe")
        if not callable(callback):
            raise ConfigError(f"callback must be callable, not {callback!r}")
        self._subscriptions[text("topic", topic)] = (text("expression", expression), callback)

    def start(self) -> None:
        """Raises: PushConsumerStartFailed (no subscription, no address, bad settings,
        no broker answers)."""
        try:
            self._native = self._start_native()
        except RmqCompatError as exc:
            raise wrap(PushConsumerStartFailed, exc) from exc
        self._started = True

    def _start_native(self) -> DefaultMQPushConsumer:
        native = self._native_consumer()
        native.start()
        return native

    def _native_consumer(self) -> DefaultMQPushConsumer:
        """The native consumer these settings make, subscribed, not started (no I/O)."""
        options = self._options
        if not self._subscriptions:
            raise PushConsumerStartFailed("subscribe() to a topic before start()")
        if not options.bootstrap_servers:
            raise ConfigError("set_name_server_address (Kafka bootstrap servers) before start()")
        native = DefaultMQPushConsumer(
            options.group,
            options.bootstrap_servers,
            namespace=options.namespace,
            kafka_config=options.librdkafka(),
            message_model=self._model,
            trace_enabled=options.trace,
            consume_thread_max=_or(self._threads, ConsumerSettings.consume_thread_max),
            consume_message_batch_max_size=(
                1
                if self.orderly
                else _or(self._batch, ConsumerSettings.consume_message_batch_max_size)
            ),
        )
        callbacks = TopicCallbacks(
            {topic: callback for topic, (_, callback) in self._subscriptions.items()}
        )
        for topic, (expression, _) in self._subscriptions.items():
            native.subscribe(topic, expression)
        listener = OrderlyCallbacks(callbacks) if self.orderly else ConcurrentCallbacks(callbacks)
        native.register_message_listener(listener)
        return native

    def shutdown(self) -> None:
        """Let running callbacks finish, commit, leave the group. Idempotent.

        Raises:
            ConsumerException: the consumer had stopped on an error (cause chained).
        """
        native, self._native = self._native, None
        if native is None:
            return
        try:
            native.shutdown()
        except RmqCompatError as exc:
            raise wrap(ConsumerException, exc) from exc


def _or(value: int | None, default: int) -> int:
    return default if value is None else value
