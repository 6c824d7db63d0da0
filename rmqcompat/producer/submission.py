"""Turn one ``Message`` into a ``PendingSend`` and hand it to the pipeline."""

from __future__ import annotations

from collections.abc import Callable

from confluent_kafka import KafkaError

from rmqcompat.config import ClientConfig
from rmqcompat.message import Message
from rmqcompat.message_id import new_message_id, process_ids
from rmqcompat.producer.pending import PendingSend, new_pending_send, pending_of_record
from rmqcompat.producer.pipeline import Pipeline
from rmqcompat.producer.records import (
    ShardingKey,
    build_record,
    check_timer,
    encode_key,
    plain_headers_of,
)
from rmqcompat.producer.send_future import OutcomeCallback
from rmqcompat.producer.send_result import SendResult
from rmqcompat.producer.topic_guard import TopicGuard

SendCallback = Callable[[SendResult | BaseException], None]


class Submitter:
    """The submission path of ``DefaultMQProducer``: size check, topic, record, pipeline.

    Metadata and level-topic requests of a send with a deadline wait at most until that
    deadline (the caller's wait for the outcome ends there too, see ``Pipeline.wait``).

    Args:
        client: the producer's client settings (size limit, namespace, delay levels).
        topics: maps logical to physical topics and creates level topics on demand.
        pipeline: receives every ``PendingSend``.
        clock_ms: wall clock in epoch milliseconds, stamped on each record.
        timer_max_delay_ms: how far ahead a timer message may be due.
    """

    def __init__(
        self,
        client: ClientConfig,
        topics: TopicGuard,
        pipeline: Pipeline,
        clock_ms: Callable[[], int],
        timer_max_delay_ms: int,
    ) -> None:
        self._client = client
        self._max_size = client.max_message_size
        self._topics = topics
        self._pipeline = pipeline
        self._clock_ms = clock_ms
        self._timer_max_delay_ms = timer_max_delay_ms
        #: Logical -> physical name of each topic that passed its check (see _missing).
        self._ready: dict[str, str] = {}
        lane = pipeline.plain_lane(self._ready, self._max_size, process_ids, clock_ms)
        #: Starts a plain asynchronous send to a topic in ``_ready`` in one call, as
        #: :meth:`submit` would (``send(msg, attempts, callback)``), or returns None.
        self.plain: Callable[[Message, int, OutcomeCallback | None], PendingSend | None]
        self.plain = lane.send

    def submit(
        self,
        msg: Message,
        key: ShardingKey,
        attempts: int,
        deadline: float | None,
        callback: SendCallback | None = None,
    ) -> PendingSend:
        # The hot path of every send: keep it free of per-send locks and needless objects.
        body = msg.body_bytes()
        if len(body) > self._max_size:
            msg.check_size(self._max_size)  # raises MessageTooLargeError, naming the limit
        physical = self._topics.physical(msg.topic)
        msg_id = new_message_id()
        now_ms = self._clock_ms()
        headers = plain_headers_of(msg, msg_id, now_ms)
        if headers is None:
            return self._submit_built(
                msg, key, attempts, deadline, callback, physical, msg_id, now_ms
            )
        pending = new_pending_send(
            physical,
            body,
            None if key is None else encode_key(key),
            headers,
            msg_id,
            msg.topic,
            msg,
            attempts,
            deadline,
            callback,
        )
        self._pipeline.submit(pending, self._missing(msg.topic, physical, deadline))
        return pending

    def _missing(self, logical: str, physical: str, deadline: float | None) -> KafkaError | None:
        """``TopicGuard.missing``; a topic that passed joins ``_ready`` (the plain lane's)."""
        error = self._topics.missing(self._pipeline.producer, physical, deadline)
        if error is None:
            self._ready[logical] = physical
        return error

    def _submit_built(
        self,
        msg: Message,
        key: ShardingKey,
        attempts: int,
        deadline: float | None,
        callback: SendCallback | None,
        physical: str,
        msg_id: str,
        now_ms: int,
    ) -> PendingSend:
        client = self._client
        check_timer(msg, now_ms, self._timer_max_delay_ms)
        prepared = build_record(
            msg,
            physical_topic=physical,
            namespace=client.namespace,
            levels=client.levels,
            msg_id=msg_id,
            now_ms=now_ms,
            sharding_key=key,
        )
        # A parked message is checked against its REAL topic, by the same rule as a plain
        # send: parking it for a missing topic would only move the failure to the forwarder.
        error = self._missing(msg.topic, physical, deadline)
        if prepared.level is None:
            logical = msg.topic
        else:
            logical = client.levels.topic(prepared.level)
            if error is None:
                self._topics.ensure_level(prepared.level, self._pipeline.producer, deadline)
        pending = pending_of_record(
            prepared.record,
            msg_id,
            logical,
            msg,
            max_attempts=attempts,
            deadline=deadline,
            on_outcome=callback,
        )
        self._pipeline.submit(pending, error)
        return pending
