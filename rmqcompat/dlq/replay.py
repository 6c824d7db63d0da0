"""Replaying dead letters, exactly once across processes and hosts.

Each chunk of replays is one Kafka transaction holding the replayed messages and the
ledger pages that record them (:mod:`rmqcompat.dlq.ledger`): a consumer (read-committed,
librdkafka's default) sees a replayed message exactly when the ledger says it was
replayed. The transactional id is fixed per namespace and group, so a second replay of
the same group, anywhere, fences the first one (its open transaction is aborted, its next
commit fails), and it reads the ledger only after that. A replay that stops part way (a
crash, a broker failure, a fence) leaves whole chunks replayed and the rest untouched;
running it again sends only the rest.

Throughput: the broker's set-up work (fence, topics, the ledger reader's connection) runs
in parallel, and meanwhile the first chunks' records are built (:mod:`rmqcompat.dlq.chunk`)
as if nothing had been replayed before. If the ledger then knows none of the group's dead
letters, those chunks stand and chunking goes on after them; otherwise the letters are
chunked again by the ledger and any chunk that changed is built again. Records are
produced positionally and without delivery callbacks (the commit fails unless every one
was written), and each chunk is built while the broker commits the one before (the
committing thread waits outside the GIL). Trace events are built from the ledger rows
after each commit.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient

from rmqcompat.clock import Clock, epoch_ms
from rmqcompat.closing import close_producer
from rmqcompat.config import ClientConfig
from rmqcompat.dlq.chunk import Chunk, ChunkBuilder, Operator, Pending, active_take_chunk
from rmqcompat.dlq.ledger import (
    COLUMNS,
    Row,
    ledger_end,
    ledger_reader,
    ledger_topic,
    replay_counts,
)
from rmqcompat.dlq.model import DeadLetter
from rmqcompat.dlq.republish import Target, replay_topic
from rmqcompat.dlq.scan import REQUEST_TIMEOUT_S
from rmqcompat.dlq.transactions import (
    TXN_TIMEOUT_S,
    HandOver,
    abort_quietly,
    fence,
    replay_producer,
    transactional_id,
)
from rmqcompat.errors import ConfigError, TopologyError
from rmqcompat.topics.naming import to_kafka_topic
from rmqcompat.topics.topology import provision_topology, replay_topology
from rmqcompat.trace import Tracer, hooks
from rmqcompat.trace.bulk import Places

__all__ = ["Operator", "ReplayOptions", "ReplaySummary", "Replayer", "transactional_id"]

#: Where a ledger row holds its REPLAY event's (msg id, original topic, replayed to,
#: origin msg id): the rows are encoded as they are.
_EVENT_PLACES: Places = (
    COLUMNS.index("msg_id"),
    COLUMNS.index("original_topic"),
    COLUMNS.index("replayed_to"),
    COLUMNS.index("origin_msg_id"),
)

#: Replays per transaction (fewer with ``rate``: about one transaction a second). Each
#: commit waits for its transaction's records and markers (some 15 ms more than building
#: the next chunk takes): 100,000 dead letters replayed at a median 88k msgs/s with 5,000
#: a transaction, 110k with 20,000 (4 alternating pairs).
DEFAULT_CHUNK = 20_000
#: A transaction also ends once its bodies reach this size, so that large messages are
#: written well within the transaction timeout.
TRANSACTION_MAX_BYTES = 64 * 1024 * 1024
#: Chunks built ahead while the broker sets a replay up, at most.
_AHEAD_MAX = 8


@dataclass(frozen=True)
class ReplayOptions:
    """``target``: ``retry`` or ``original``; ``force``: replay what was replayed before;
    ``rate``: at most that many messages a second (None: as fast as possible); ``chunk``:
    at most that many messages a transaction."""

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
        trace_enabled: bool = True,
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
        # REPLAY events; ``trace_enabled`` like every client's message-trace switch
        self._tracer = Tracer.for_client(config, f"replay-{group}", enabled=trace_enabled)

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
        summary = ReplaySummary()
        builder = ChunkBuilder(
            self._group, self._options.target, self._config.namespace, self._ledger, self._operator
        )
        producer, hand_over = replay_producer(self._config, self._group)
        ledger = ledger_reader(self._config)
        admin = AdminClient(self._config.librdkafka("admin"))
        try:
            with ThreadPoolExecutor(max_workers=4) as pool:
                waits = [
                    pool.submit(fence, producer),
                    pool.submit(self._ensure_topics, letters),
                    pool.submit(ledger.list_topics, self._ledger, timeout=REQUEST_TIMEOUT_S),
                    pool.submit(admin.list_topics, self._ledger, timeout=REQUEST_TIMEOUT_S),
                ]
                first_pass = ReplaySummary()
                pending = self._chunks(letters, {}, first_pass)
                ahead = self._build_ahead(builder, pending, waits)
                for wait in waits:
                    wait.result()
                # complete only now: no older replay of the group can commit any more
                end = ledger_end(admin, self._config.namespace)
                counts = replay_counts(self._config, self._group, ledger, end)
                if counts:  # some may have been replayed: chunked again, by the ledger
                    chunks: Iterator[Sequence[Pending]] = self._chunks(letters, counts, summary)
                else:  # the chunks built ahead stand: the first pass goes on after them
                    summary = first_pass
                    chunks = chain([chunk.pending for chunk in ahead], pending)
                self._replay(producer, hand_over, builder, chunks, ahead, pool, summary)
        except KafkaException as exc:
            summary.stopped = f"{exc.args[0].str() if exc.args else exc}"
        finally:
            ledger.close()
            # what is still queued belongs to an aborted or unfinished transaction, which
            # the next replay of the group aborts: dropping it loses nothing
            close_producer(producer)
            self._tracer.close()
        return summary

    def _ensure_topics(self, letters: Sequence[DeadLetter]) -> None:
        """The ledger and the group's retry topic are created like every internal topic
        (in one request); an original topic must exist (a replay never creates business
        topics)."""
        config = self._config
        to_retry_topic = self._options.target == "retry"
        if not to_retry_topic:
            self._check_originals(letters)
        planned = replay_topology(
            self._group,
            to_retry_topic=to_retry_topic,
            namespace=config.namespace,
            max_message_size=config.max_message_size,
        )
        provision_topology(config.librdkafka("admin"), planned)

    def _check_originals(self, letters: Sequence[DeadLetter]) -> None:
        config = self._config
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

    def _chunks(
        self, letters: Iterable[DeadLetter], counts: dict[str, int], summary: ReplaySummary
    ) -> Iterator[list[Pending]]:
        """The transactions' contents: what is to be replayed, given the ledger's
        ``counts``; counts what is skipped or cannot be replayed in ``summary``."""
        remaining, options = iter(letters), self._options
        destinations: dict[tuple[str, str], str] = {}  # one or a few per replay
        limits = (options.per_transaction, TRANSACTION_MAX_BYTES)
        while chunk := active_take_chunk(
            remaining, counts, options.force, options.target, limits, destinations, summary
        ):
            yield chunk

    def _build(self, builder: ChunkBuilder, pending: Sequence[Pending]) -> Chunk | None:
        return builder.build(pending, self._now_ms()) if pending else None

    def _build_ahead(
        self, builder: ChunkBuilder, chunks: Iterator[list[Pending]], waits: list[Future[Any]]
    ) -> deque[Chunk]:
        """The first ``chunks`` (at least one, at most :data:`_AHEAD_MAX`), built while the
        set-up ``waits`` for the broker (``chunks``: as if the ledger held nothing of these
        letters)."""
        ahead: deque[Chunk] = deque()
        for pending in chunks:
            ahead.append(builder.build(pending, self._now_ms()))
            if len(ahead) >= _AHEAD_MAX or all(wait.done() for wait in waits):
                break
        return ahead

    def _replay(
        self,
        producer: Producer,
        hand_over: HandOver,
        builder: ChunkBuilder,
        chunks: Iterator[Sequence[Pending]],
        ahead: deque[Chunk],
        committer: ThreadPoolExecutor,
        summary: ReplaySummary,
    ) -> None:
        """Write each chunk in a transaction; the next chunk is built while the broker
        commits (on a ``committer`` thread). A chunk built ahead is used only if the ledger
        left its contents unchanged.

        Raises KafkaException: a transaction failed (aborted when possible).
        """

        def build(pending: Sequence[Pending]) -> Chunk | None:
            if ahead and ahead[0].pending == pending:
                return ahead.popleft()
            ahead.clear()  # the ledger changed the chunks: the rest is built anew
            return self._build(builder, pending)

        chunk = build(next(chunks, []))
        started, sent = self._monotonic(), 0
        while chunk is not None:
            count = len(chunk.pending)
            sent = self._pace(started, sent, count)
            producer.begin_transaction()
            try:
                hand_over(chunk.records)
                hand_over(chunk.pages)
                # no delivery callbacks: the commit succeeds only if every record was written
                commit = committer.submit(producer.commit_transaction, TXN_TIMEOUT_S)
                following = build(next(chunks, []))
                commit.result()
            except KafkaException:
                summary.failed += count
                summary.problems.append(f"{count} dead letters not replayed (transaction failed)")
                abort_quietly(producer)
                raise
            summary.replayed += count
            self._progress(count)
            self._traced(chunk.rows)
            chunk = following

    def _traced(self, committed: Sequence[Row]) -> None:
        if self._tracer.enabled:
            self._tracer.start()  # once; later calls do nothing
            # the ledger rows already hold every field of the events: nothing decoded
            # again, and they are read where they are, on the trace sink's thread
            command, count = self._operator.command, len(committed)
            hooks.replayed(self._tracer, self._group, committed, count, command, _EVENT_PLACES)

    def _pace(self, started: float, sent: int, more: int) -> int:
        """Wait until sending ``more`` keeps the rate; the new total."""
        if self._options.rate is not None:
            due = started + sent / self._options.rate
            wait = due - self._monotonic()
            if wait > 0:
                self._sleep(wait)
        return sent + more
