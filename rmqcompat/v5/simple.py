"""``SimpleConsumer``: RocketMQ 5's receive / ack / invisible time, on Kafka.

Design. Kafka has no per-message visibility, so the invisible time lives in the client
and every outcome is made durable through the core consumer's settlement:

- Fetching is the core push consumer's engine (one per topic, :mod:`.native`): process
  queues, flow control, group membership, and offsets committed only past *settled*
  messages. In place of listener threads, a :class:`~rmqcompat.v5.held_pool.HeldPool`
  parks each fetched message in the :class:`~rmqcompat.v5.handoff.Handoff` and finishes
  its batch when its lease ends (a heap of deadlines, no thread per message), so the
  engine's accounting is unchanged.
- ``receive`` takes parked messages and grants each a lease
  (:class:`~rmqcompat.v5.leases.Leases`): a receipt handle and a deadline of now +
  ``invisible_duration``. ``change_invisible_duration`` swaps the handle and restarts
  the deadline; the old handle is refused from then on (40013).
- ``ack`` settles the lease: the batch finishes as CONSUME_SUCCESS and the message's
  offset may be committed.
- A lease past its deadline is given back: the batch finishes as RECONSUME_LATER on
  the shortest delay level of the table, so the core sends the message back through the delay
  forwarder to ``%RETRY%<group>``, whence it is received again with ``delivery_attempt``
  + 1 about one level later (1 s by default; RocketMQ's revive lag is 2-3 s). When the
  group's max attempts (17) are used up, the send-back puts it in ``%DLQ%<group>``
  instead, where ``rmqcompat dlq`` sees it. The offset moves on only once Kafka
  acknowledged the retry or DLQ record.
- A process that dies holding messages never committed past them: the group's next
  owner of the partition (after Kafka's session timeout) reads them again. Before
  ``receive`` returns, it writes what this member holds (partition, offset, attempt) to
  the group's attempt log ``%ATTEMPT%<group>`` (one produce and flush per call,
  :mod:`.attempts`, :mod:`.attempt_log`); the next owner reads the log when it is
  assigned the partition, so those messages come back with ``delivery_attempt`` + 1,
  and past the max attempts go to ``%DLQ%<group>``, as RocketMQ counts an attempt whose
  invisible time ran out. Nothing is lost.
- ``shutdown`` gives back every held and every fetched-but-unreceived message at
  once (each counts one attempt), so the group redelivers them promptly.
- FIFO (``message_group``): the core's lanes (:mod:`.lanes`) hand a group's next
  message over only once the previous one is settled, and an expired FIFO message is
  offered again in place (``delivery_attempt`` + 1, not through the retry topic) until
  its attempts are used up, then dead-lettered, so its group stays in order.

Delivery is at least once: a rebalance that moves a partition away while a message of
it is held lets the new owner deliver it again (the old holder's ack is still accepted).
Messages are parked or held only as far as ``max_cached_messages`` per topic.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Mapping
from concurrent.futures import Future
from typing import Any

from rmqcompat.errors import RmqCompatError
from rmqcompat.v5.attempt_log import AttemptLog
from rmqcompat.v5.attempts import Entry, Held
from rmqcompat.v5.config import ClientConfiguration
from rmqcompat.v5.consumer_base import ConsumerBase
from rmqcompat.v5.exceptions import IllegalArgumentException, IllegalStateException, translate
from rmqcompat.v5.filter import FilterExpression
from rmqcompat.v5.futures import in_thread
from rmqcompat.v5.handoff import Handoff, Slot
from rmqcompat.v5.held_pool import HeldPool
from rmqcompat.v5.leases import MAX_INVISIBLE_S, MIN_INVISIBLE_S, Leases
from rmqcompat.v5.message import Message
from rmqcompat.v5.native import DEFAULT_MAX_ATTEMPTS, CoreLimits

#: Default of ``max_cached_messages``: fetched messages parked or held per topic.
DEFAULT_MAX_CACHED = 64


def _whole_seconds(value: object, name: str, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise IllegalArgumentException(
            f"{name} must be whole seconds (an int), not {type(value).__name__}"
        )
    if not low <= value <= high:
        raise IllegalArgumentException(f"{name} must be within [{low}, {high}] seconds")
    return value


def _done(result: Any = None, error: BaseException | None = None) -> Future[Any]:
    future: Future[Any] = Future()
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)
    return future


class SimpleConsumer(ConsumerBase):
    """``SimpleConsumer(client_configuration, consumer_group, subscription=None,
    await_duration=20)``; rmqcompat extensions: ``max_attempts`` (17) and
    ``max_cached_messages`` (64 per topic). See the module docstring for the design.

    Raises (constructor, no I/O): IllegalArgumentException (bad group, topic, types),
    UnsupportedException (an SQL92 filter).
    """

    def __init__(
        self,
        client_configuration: ClientConfiguration,
        consumer_group: str,
        subscription: Mapping[str, FilterExpression] | None = None,
        await_duration: int = 20,
        *,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        max_cached_messages: int = DEFAULT_MAX_CACHED,
    ) -> None:
        if await_duration is None:
            raise IllegalArgumentException("awaitDuration should not be null")
        self._await_s = _whole_seconds(await_duration, "await_duration", 0, MAX_INVISIBLE_S)
        limits = CoreLimits(max_cached_messages, max_attempts)
        super().__init__(client_configuration, consumer_group, subscription, limits)
        self._handoff = Handoff(Leases())
        self._receive_lock = threading.Lock()
        self._held = Held()
        self._log: AttemptLog | None = None

    def __str__(self) -> str:
        return f"SIMPLE_CONSUMER:{self.consumer_group}"

    def startup(self) -> None:
        """Join the group for every subscribed topic (see :class:`ConsumerBase`); opens
        the group's attempt log first (created when missing).

        Raises: IllegalStateException (running), ProxyTimeoutException (no broker).
        """
        if self.is_running:
            raise IllegalStateException("consumer is already running")
        try:
            self._log = AttemptLog(self._config, self._group, uuid.uuid4().hex)
        except RmqCompatError as exc:
            raise translate(exc) from exc
        self._lost_attempts = self._log.lost_attempts
        try:
            super().startup()
        except BaseException:
            self._close_log()
            raise

    def shutdown(self) -> None:
        """Leave the group: every held and fetched message is given back (one attempt
        each); then this member's attempt-log record is removed."""
        try:
            super().shutdown()
        finally:
            self._close_log()

    def _close_log(self) -> None:
        log, self._log = self._log, None
        if log is not None:
            log.close()

    def receive(self, max_message_num: int, invisible_duration: int) -> list[Message]:
        """Up to ``max_message_num`` messages, each invisible to the group for
        ``invisible_duration`` seconds; waits up to ``await_duration`` for the first.

        Raises:
            IllegalStateException: not running.
            IllegalArgumentException: no subscription, a count below 1, a duration that
                is not whole seconds within [1 s, 12 h].
        """
        if not self.is_running:
            raise IllegalStateException("consumer is not running now.")
        if not self.subscriptions():
            raise IllegalArgumentException("There is no topic to receive message")
        if not isinstance(max_message_num, int) or isinstance(max_message_num, bool):
            raise IllegalArgumentException("max_message_num must be an int")
        if max_message_num <= 0:
            raise IllegalArgumentException("max_message_num must be greater than 0")
        invisible = _whole_seconds(
            invisible_duration, "invisible_duration", MIN_INVISIBLE_S, MAX_INVISIBLE_S
        )
        namespace = self._config.namespace
        with self._receive_lock:
            slots = self._handoff.take(max_message_num, self._await_s, invisible)
            if slots:
                self._record(slots)
        return [Message.received(s.message, namespace, s.handle) for s in slots]

    def _record(self, slots: list[Slot]) -> None:
        """Write what this member holds, ``slots`` included, to the attempt log; if Kafka
        does not take it, ``slots`` are given back (one attempt each) and the error raised."""
        log = self._log
        if log is None:  # shut down meanwhile: every lease was given back already
            raise IllegalStateException("consumer is not running now.")
        handed: dict[int, Entry] = {
            s.lease_id: (s.key, s.message.queue_offset, s.message.reconsume_times + 1)
            for s in slots
        }
        try:
            log.write(self._held.add(handed))
        except RmqCompatError as exc:
            self._handoff.leases.expire(list(handed))
            raise translate(exc) from exc

    def receive_async(self, max_message_num: int, invisible_duration: int) -> Future[list[Message]]:
        """:meth:`receive` on a helper thread; the future gets the list or the error."""
        return in_thread(
            lambda: self.receive(max_message_num, invisible_duration), "rmqcompat-v5-receive"
        )

    def ack(self, message: Message) -> None:
        """Settle a received message.

        Raises:
            IllegalStateException: not running.
            BadRequestException: code 40013, the handle was replaced, expired or unknown.
        """
        self._handle_of(message, "ack message")
        lease_id = self._handoff.leases.ack(message.receipt_handle or "")
        log = self._log
        if log is not None:
            log.write_later(self._held.settle(lease_id))

    def ack_async(self, message: Message) -> Future[None]:
        """:meth:`ack`, settled at once (it is local); the future gets the error."""
        try:
            self.ack(message)
        except Exception as exc:
            return _done(error=exc)
        return _done()

    def change_invisible_duration(self, message: Message, invisible_duration: int) -> None:
        """Hide ``message`` for ``invisible_duration`` seconds from now; its
        ``receipt_handle`` is replaced (the old one is refused from now on).

        Raises: IllegalStateException, IllegalArgumentException, BadRequestException
        (40013).
        """
        handle = self._handle_of(message, "change invisible duration")
        invisible = _whole_seconds(
            invisible_duration, "invisible_duration", MIN_INVISIBLE_S, MAX_INVISIBLE_S
        )
        message.receipt_handle = self._handoff.leases.change(handle, invisible)

    def change_invisible_duration_async(
        self, message: Message, invisible_duration: int
    ) -> Future[None]:
        try:
            self.change_invisible_duration(message, invisible_duration)
        except Exception as exc:
            return _done(error=exc)
        return _done()

    def _handle_of(self, message: Message, action: str) -> str:
        if not self.is_running:
            raise IllegalStateException(f"unable to {action} because consumer is not running")
        if not isinstance(message, Message):
            raise IllegalArgumentException(
                f"message must be a Message, not {type(message).__name__}"
            )
        return message.receipt_handle or ""

    def _listener_for(self, topic: str) -> HeldPool:
        self._handoff.reopen(topic)
        levels = self._config.client.levels
        return HeldPool(
            self._handoff,
            self._held,
            topic,
            levels.shortest_level(),
            self._limits.max_attempts,
            self._limits.threads,
            time.monotonic,
        )

    def _closing(self, topic: str) -> None:
        self._handoff.abandon(topic)
