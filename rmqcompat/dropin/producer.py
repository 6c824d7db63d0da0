"""The drop-in ``Producer``: upstream's API on :class:`rmqcompat.DefaultMQProducer`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from rmqcompat.dropin.base import ClientBase
from rmqcompat.dropin.enums import SendResult, SendStatus
from rmqcompat.dropin.message import Message, Text, text
from rmqcompat.errors import ClientStateError, ConfigError, RmqCompatError
from rmqcompat.exceptions import (
    ProducerException,
    ProducerSendOnewayFailed,
    ProducerSendOrderlyFailed,
    ProducerSendSyncFailed,
    ProducerStartFailed,
    wrap,
)
from rmqcompat.message import DEFAULT_MAX_MESSAGE_SIZE
from rmqcompat.message import Message as NativeMessage
from rmqcompat.producer import DefaultMQProducer
from rmqcompat.producer import SendResult as NativeResult
from rmqcompat.producer import SendStatus as NativeStatus

T = TypeVar("T")

#: RocketMQ's default send timeout (ms).
DEFAULT_TIMEOUT_MS = 3000


def as_result(native: NativeResult) -> SendResult:
    if native.send_status is not NativeStatus.SEND_OK:  # only with a spool, never set here
        raise ProducerSendSyncFailed(f"message {native.msg_id} was not delivered")
    return SendResult(SendStatus.OK, native.msg_id, native.queue_offset)


class Producer(ClientBase):
    """``Producer(group_id, orderly=False, timeout=None, compress_level=None,
    max_message_size=None)``, thread-safe once started.

    Sends wait for ``acks=all`` and retry as :class:`rmqcompat.DefaultMQProducer` does.
    ``orderly`` changes nothing on Kafka: messages with one sharding key always keep
    their order. ``set_compress_level(n)`` compresses record batches with gzip level n
    (upstream: zlib bodies above 4 KiB); consumers decompress transparently.
    """

    def __init__(
        self,
        group_id: Text,
        orderly: bool = False,
        timeout: int | None = None,
        compress_level: int | None = None,
        max_message_size: int | None = None,
    ) -> None:
        super().__init__(group_id)
        self.orderly = bool(orderly)
        self._timeout_ms = DEFAULT_TIMEOUT_MS
        self._compress_level: int | None = None
        self._max_message_size = DEFAULT_MAX_MESSAGE_SIZE
        self._native: DefaultMQProducer | None = None
        if timeout is not None:
            self.set_timeout(timeout)
        if compress_level is not None:
            self.set_compress_level(compress_level)
        if max_message_size is not None:
            self.set_max_message_size(max_message_size)

    def set_timeout(self, timeout: int) -> None:
        """The send timeout in ms (``send_msg_timeout``)."""
        self._setting("set_timeout")
        self._timeout_ms = _positive("timeout", timeout)

    def set_compress_level(self, level: int) -> None:
        self._setting("set_compress_level")
        if type(level) is not int or not 0 <= level <= 9:
            raise ConfigError(f"compress level must be an int 0..9, not {level!r}")
        self._compress_level = level

    def set_max_message_size(self, max_size: int) -> None:
        self._setting("set_max_message_size")
        self._max_message_size = _positive("max_message_size", max_size)

    def _kafka_config(self) -> dict[str, Any]:
        settings = self._options.librdkafka()
        if self._compress_level is not None:
            settings.setdefault("compression.codec", "gzip")
            settings.setdefault("compression.level", self._compress_level)
        return settings

    def start(self) -> None:
        """Raises: ProducerStartFailed (no address, bad settings, no broker answers)."""
        try:
            self._native = self._start_native()
        except RmqCompatError as exc:
            raise wrap(ProducerStartFailed, exc) from exc
        self._started = True

    def _start_native(self) -> DefaultMQProducer:
        options = self._options
        if not options.bootstrap_servers:
            raise ConfigError("set_name_server_address (Kafka bootstrap servers) before start()")
        native = DefaultMQProducer(
            options.group,
            options.bootstrap_servers,
            namespace=options.namespace,
            kafka_config=self._kafka_config(),
            send_msg_timeout=self._timeout_ms,
            max_message_size=self._max_message_size,
            trace_enabled=options.trace,
        )
        native.start()
        return native

    def shutdown(self) -> None:
        """Waits for every pending send (oneway ones too). Idempotent."""
        native, self._native = self._native, None
        if native is not None:
            native.shutdown()

    def send_sync(self, msg: Message) -> SendResult:
        """Raises: ProducerSendSyncFailed (the cause is chained; the message was not sent)."""
        return as_result(self._send(ProducerSendSyncFailed, lambda p, m: p.send(m), msg))

    def send_oneway(self, msg: Message) -> None:
        """Raises ProducerSendOnewayFailed only for what is refused before any I/O; a
        later failure is logged (upstream: lost silently)."""
        self._send(ProducerSendOnewayFailed, lambda p, m: p.send_oneway(m), msg)

    def send_orderly_with_sharding_key(self, msg: Message, sharding_key: Text) -> SendResult:
        """Same key, same partition, in send order. Raises ProducerSendOrderlyFailed."""
        key = text("sharding_key", sharding_key)
        return as_result(
            self._send(ProducerSendOrderlyFailed, lambda p, m: p.send_orderly(m, key), msg)
        )

    def _send(
        self,
        failure: type[ProducerException],
        send: Callable[[DefaultMQProducer, NativeMessage], T],
        msg: Message,
    ) -> T:
        native = self._native
        try:
            if native is None:
                raise ClientStateError("start() the producer before sending")
            return send(native, msg.to_native())
        except RmqCompatError as exc:
            if isinstance(exc, failure):
                raise
            raise wrap(failure, exc) from exc


def _positive(name: str, value: int) -> int:
    if type(value) is not int or value <= 0:
        raise ConfigError(f"{name} must be a positive int, not {value!r}")
    return value
