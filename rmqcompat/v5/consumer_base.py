"""What the 5.x SimpleConsumer and PushConsumer share: a group, subscriptions (one core
consumer per topic, :mod:`rmqcompat.v5.native`), ``startup``/``shutdown``,
``subscribe``/``unsubscribe`` while running, upstream's checks and messages."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from rmqcompat.consumer import DefaultMQPushConsumer
from rmqcompat.errors import RmqCompatError
from rmqcompat.topics.naming import validate_group, validate_topic
from rmqcompat.v5.config import ClientConfiguration
from rmqcompat.v5.exceptions import IllegalArgumentException, IllegalStateException, translate
from rmqcompat.v5.filter import FilterExpression
from rmqcompat.v5.lanes import LostAttempts
from rmqcompat.v5.native import CoreLimits, core_consumer


def _checked_group(group: object) -> str:
    if not isinstance(group, str) or not group.strip():
        raise IllegalArgumentException("consumerGroup should not be null")
    try:
        return validate_group(group)
    except RmqCompatError as exc:
        raise IllegalArgumentException(str(exc)) from exc


def _checked_filter(topic: object, expression: FilterExpression | None) -> str:
    """The tag expression of a subscription; raises upstream's exceptions."""
    if not isinstance(topic, str):
        raise IllegalArgumentException("topic must be a str")
    try:
        validate_topic(topic)
    except RmqCompatError as exc:
        raise IllegalArgumentException(str(exc)) from exc
    if expression is None:
        expression = FilterExpression()
    if not isinstance(expression, FilterExpression):
        raise IllegalArgumentException("the subscription's value must be a FilterExpression")
    return expression.tag_expression()


class ConsumerBase:
    """A consumer group's member with per-topic core consumers (see the module doc).

    Subclasses give :meth:`_listener_for` (the core listener of one topic) and
    :meth:`_closing` (a topic's core consumer is about to shut down).
    """

    def __init__(
        self,
        client_configuration: ClientConfiguration,
        consumer_group: str,
        subscription: Mapping[str, FilterExpression] | None,
        limits: CoreLimits,
    ) -> None:
        if not isinstance(client_configuration, ClientConfiguration):
            raise IllegalArgumentException("client_configuration must be a ClientConfiguration")
        if not isinstance(limits.max_attempts, int) or limits.max_attempts < 1:
            raise IllegalArgumentException("max_attempts must be an int >= 1")
        self._config = client_configuration
        self._group = _checked_group(consumer_group)
        self._limits = limits
        self._filters = {t: _checked_filter(t, f) for t, f in dict(subscription or {}).items()}
        self._cores: dict[str, DefaultMQPushConsumer] = {}
        self._lock = threading.RLock()
        self._running = False
        #: what a subclass tells its core consumers of attempts lost by dead members
        self._lost_attempts: LostAttempts | None = None

    @property
    def limits(self) -> CoreLimits:
        return self._limits

    @property
    def consumer_group(self) -> str:
        return self._group

    @property
    def is_running(self) -> bool:
        return self._running

    def startup(self) -> None:
        """Join the group for every subscribed topic.

        Raises: IllegalStateException (running), ProxyTimeoutException (no broker).
        """
        with self._lock:
            if self._running:
                raise IllegalStateException("consumer is already running")
            try:
                for topic, expression in self._filters.items():
                    self._start_core(topic, expression)
            except BaseException:
                self._stop_cores()
                raise
            self._running = True

    def shutdown(self) -> None:
        """Leave the group; see the subclass for what happens to unsettled messages."""
        with self._lock:
            if not self._running:
                raise IllegalStateException("consumer is not running now.")
            self._running = False
            self._stop_cores()

    def subscribe(self, topic: str, filter_expression: FilterExpression | None = None) -> None:
        """Add (or replace the filter of) ``topic`` while running. Replacing a filter
        restarts the topic's core consumer: messages of it still held are given back.

        Raises: IllegalStateException (not running), IllegalArgumentException,
        UnsupportedException (SQL92).
        """
        with self._lock:
            if not self._running:
                raise IllegalStateException(
                    "unable to add subscription because consumer is not running"
                )
            expression = _checked_filter(topic, filter_expression)
            if self._filters.get(topic) == expression and topic in self._cores:
                return
            self._stop_core(topic)
            self._start_core(topic, expression)
            self._filters[topic] = expression

    def unsubscribe(self, topic: str) -> None:
        """Stop consuming ``topic``. Raises: IllegalStateException (not running)."""
        with self._lock:
            if not self._running:
                raise IllegalStateException(
                    "unable to remove subscription because consumer is not running"
                )
            self._filters.pop(topic, None)
            self._stop_core(topic)

    def subscriptions(self) -> dict[str, str]:
        """Topic -> tag expression."""
        with self._lock:
            return dict(self._filters)

    def _start_core(self, topic: str, expression: str) -> None:
        core = core_consumer(
            self._config,
            self._group,
            topic,
            expression,
            self._listener_for(topic),
            self._limits,
            self._lost_attempts,
        )
        try:
            core.start()
        except RmqCompatError as exc:
            raise translate(exc) from exc
        self._cores[topic] = core

    def _stop_core(self, topic: str) -> None:
        core = self._cores.pop(topic, None)
        if core is not None:
            self._closing(topic)
            try:
                core.shutdown()
            except RmqCompatError as exc:  # its poll thread had died (cause chained)
                raise translate(exc) from exc

    def _stop_cores(self) -> None:
        for topic in list(self._cores):
            self._stop_core(topic)

    def _listener_for(self, topic: str) -> Any:
        raise NotImplementedError

    def _closing(self, topic: str) -> None:
        raise NotImplementedError
