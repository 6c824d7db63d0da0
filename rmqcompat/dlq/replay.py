"""Replaying dead letters, exactly once across processes and hosts.

Each chunk of replays is one Kafka transaction holding the replayed messages and their
ledger entries (:mod:`rmqcompat.dlq.ledger`): a consumer (read-committed, librdkafka's
default) sees a replayed message exactly when the ledger says it was replayed. The
transactional id is fixed per namespace and group, so a second replay of the same group,
anywhere, fences the first one (its open transaction is aborted, its next commit fails),
and it reads the ledger only after that. A replay that stops part way (a crash, a
broker failure, a fence) leaves whole chunks replayed and the rest untouched; running it
again sends only the rest.
"""

from __future__ import annotations

import getpass
import socket
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient

from rmqcompat.clock import Clock, epoch_ms
from rmqcompat.closing import close_producer
from rmqcompat.config import ClientConfig
from rmqcompat.dlq.ledger import LedgerEntry, ensure_ledger, ledger_topic, replay_counts
from rmqcompat.dlq.model import DeadLetter
from rmqcompat.dlq.republish import Target, replay_record, replay_topic
from rmqcompat.errors import ConfigError, TopologyError
from rmqcompat.message_id import new_message_id
from rmqcompat.topics.naming import retry_topic, to_kafka_topic
from rmqcompat.topics.provision import ensure_topics
from rmqcompat.topics.spec import TopologySpec
from rmqcompat.wire import OutgoingRecord

#: Replays per transaction (fewer with ``rate``: about one transaction a second).
DEFAULT_CHUNK = 1000
_TXN_TIMEOUT_S = 30.0


def transactional_id(namespace: str, group: str) -> str:
    """The one transactional id of every replay of ``group`` in ``namespace``."""
    return f"rmqcompat-dlq-replay.{namespace}.{group}"


@dataclass(frozen=True)
class Operator:
    """Who runs the replay, recorded in every ledger entry."""

    who: str
    host: str
    command: str

    @classmethod
    def current(cls, command: str) -> Operator:
        return cls(getpass.getuser(), socket.gethostname(), command)


@dataclass(frozen=True)
class ReplayOptions:
    """``target``: ``retry`` or ``original``; ``force``: replay what was replayed before;
    ``rate``: at most that many messages a second (None: as fast as possible)."""

    target: Target = "retry"
    force: bool = False
    rate: float | None = None
    chunk: int = DEFAULT_CHUNK

    def __post_init__(self) -> None:
        if self.rate is not None and not self.rate > 0:
            raise ConfigError(f"rate must be > 0 messages a second, not {self.rate}")
        if self.chunk < 1:
            raise ConfigError(f"chunk must be >= 1, not {self.chunk}")

    @property
    def per_transaction(self) -> int:
        return self.chunk if self.rate is None else max(1, min(self.chunk, int(self.rate)))


@dataclass
class ReplaySummary:
    """What a replay did; ``problems`` names every dead letter not replayed, and why."""

    replayed: int = 0
    skipped: int = 0
    failed: int = 0
    problems: list[str] = field(default_factory=list)
    stopped: str | None = None

    @property
    def ok(self) -> bool:
        return not self.failed and self.stopped is None


@dataclass
class _Pending:
    letter: DeadLetter
    replay: int
    topic: str  # logical destination


class Replayer:
    """Replays dead letters of one group; see the module docstring for the guarantees.

    :meth:`run` blocks until every dead letter given was replayed, skipped or failed, or
    the replay stopped (``summary.stopped`` says why); it raises only for bad settings.
    """

    def __init__(
        self,
        config: ClientConfig,
        group: str,
        operator: Operator,
        options: ReplayOptions = ReplayOptions(),
        *,
        now_ms: Clock = epoch_ms,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        progress: Callable[[int], None] = lambda _done: None,
    ) -> None:
        self._config = config
        self._group = group
        self._operator = operator
        self._options = options
        self._now_ms = now_ms
        self._monotonic = monotonic
        self._sleep = sleep
        self._progress = progress
        self._ledger = ledger_topic(config.namespace)

    def plan(self, letters: Iterable[DeadLetter]) -> tuple[list[DeadLetter], list[DeadLetter]]:
        """``(would be replayed, skipped as replayed before)``; writes nothing."""
        counts = replay_counts(self._config, self._group)
        send: list[DeadLetter] = []
        skip: list[DeadLetter] = []
        for letter in letters:
            replayed_before = counts.get(letter.dlq_id, 0) > 0
            (skip if replayed_before and not self._options.force else send).append(letter)
        return send, skip

    def run(self, letters: Sequence[DeadLetter]) -> ReplaySummary:
        """Raises TopologyError: a destination topic is missing and may not be created here
        (an original topic), or could not be created; nothing was sent."""
        self._ensure_destinations(letters)
        summary = ReplaySummary()
        producer = self._producer()
        try:
            producer.init_transactions(_TXN_TIMEOUT_S)  # fences an older replay of the group
            ensure_ledger(self._config)
            counts = replay_counts(self._config, self._group)
            self._replay(producer, letters, counts, summary)
        except KafkaException as exc:
            summary.stopped = f"{exc.args[0].str() if exc.args else exc}"
        finally:
            # what is still queued belongs to an aborted or unfinished transaction, which
            # the next replay of the group aborts: dropping it loses nothing
            close_producer(producer)
        return summary

    def _ensure_destinations(self, letters: Sequence[DeadLetter]) -> None:
        """The group's retry topic is created like every retry topic; an original topic
        must exist (a replay never creates business topics)."""
        config = self._config
        if self._options.target == "retry":
            spec = TopologySpec().sized_for(config.max_message_size).retry
            ensure_topics(
                config.librdkafka("admin"), {retry_topic(self._group): spec}, config.namespace
            )
            return
        wanted = set()
        for letter in letters:
            try:
                wanted.add(replay_topic(letter, "original"))
            except ConfigError:
                continue  # reported per dead letter when it is its turn
        existing = AdminClient(config.librdkafka("admin")).list_topics(timeout=10).topics
        missing = sorted(t for t in wanted if to_kafka_topic(t, config.namespace) not in existing)
        if missing:
            raise TopologyError(
                f"original topic(s) {', '.join(missing)} do not exist; nothing sent"
            )

    def _producer(self) -> Producer:
        settings = self._config.librdkafka(
            "producer",
            **{
                "transactional.id": transactional_id(self._config.namespace, self._group),
                "enable.idempotence": True,
                "transaction.timeout.ms": int(_TXN_TIMEOUT_S * 1000),
            },
        )
        return Producer(settings)

    def _replay(
        self,
        producer: Producer,
        letters: Iterable[DeadLetter],
        counts: dict[str, int],
        summary: ReplaySummary,
    ) -> None:
        chunk: list[_Pending] = []
        started, sent = self._monotonic(), 0
        for letter in letters:
            done = counts.get(letter.dlq_id, 0)
            if done and not self._options.force:
                summary.skipped += 1
                continue
            try:
                topic = replay_topic(letter, self._options.target)
            except ConfigError as exc:
                summary.failed += 1
                summary.problems.append(str(exc))
                continue
            chunk.append(_Pending(letter, done, topic))
            if len(chunk) >= self._options.per_transaction:
                sent = self._pace(started, sent, len(chunk))
                self._commit(producer, chunk, summary)
                chunk = []
        if chunk:
            self._pace(started, sent, len(chunk))
            self._commit(producer, chunk, summary)

    def _pace(self, started: float, sent: int, more: int) -> int:
        """Wait until sending ``more`` keeps the rate; the new total."""
        if self._options.rate is not None:
            due = started + sent / self._options.rate
            wait = due - self._monotonic()
            if wait > 0:
                self._sleep(wait)
        return sent + more

    def _commit(self, producer: Producer, chunk: list[_Pending], summary: ReplaySummary) -> None:
        """Raises KafkaException: the transaction failed (aborted when possible)."""
        producer.begin_transaction()
        try:
            for pending in chunk:
                self._send(producer, pending)
            producer.commit_transaction(_TXN_TIMEOUT_S)
        except KafkaException:
            summary.failed += len(chunk)
            summary.problems.append(f"{len(chunk)} dead letters not replayed (transaction failed)")
            _abort_quietly(producer)
            raise
        summary.replayed += len(chunk)
        self._progress(len(chunk))

    def _send(self, producer: Producer, pending: _Pending) -> None:
        letter, when_ms = pending.letter, self._now_ms()
        entry = LedgerEntry(
            group=self._group,
            dlq_id=letter.dlq_id,
            msg_id=letter.msg_id,
            origin_msg_id=letter.origin_msg_id,
            original_topic=letter.original_topic,
            replayed_to=pending.topic,
            replayed_msg_id=new_message_id(),
            who=self._operator.who,
            host=self._operator.host,
            when_ms=when_ms,
            command=self._operator.command,
            replay=pending.replay,
        )
        record = replay_record(
            letter,
            self._options.target,
            self._config.namespace,
            new_msg_id=entry.replayed_msg_id,
            replay_id=entry.key,
            when_ms=when_ms,
            topic=pending.topic,
        )
        _produce(producer, record)
        key, value = entry.encode()
        _produce(producer, OutgoingRecord(self._ledger, value, key, []))


def _produce(producer: Producer, record: OutgoingRecord) -> None:
    while True:
        try:
            producer.produce(
                record.topic,
                record.value,
                record.key,
                headers=record.headers,  # type: ignore[arg-type]  # stub's list is invariant
            )
            return
        except BufferError:  # local queue full: serve delivery reports, then again
            producer.poll(0.1)


def _abort_quietly(producer: Any) -> None:
    try:
        producer.abort_transaction(_TXN_TIMEOUT_S)
    except KafkaException:
        pass  # fenced or fatal: the broker aborts it when the transaction times out
