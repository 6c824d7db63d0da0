"""The replay ledger: the durable record of every dead letter replayed, shared by every host.

Topic: logical ``RMQ_SYS_REPLAY_LOG``, physical ``<ns>.rmq.replay-log``
(:data:`rmqcompat.topics.naming.REPLAY_LOG_TOPIC`), one partition, compacted
(``cleanup.policy=compact``, kept forever). ``rmqcompat dlq replay`` creates it on first
use and writes its records in the same Kafka transaction as the replayed messages, so a
message is in the ledger exactly when its replay is visible to read-committed consumers.

Record format (the contract that audit jobs read): one record per *page*, up to
:data:`PAGE_SIZE` replays of one group made in one transaction, so the fields they share
are stored once and a replay costs no record of its own.

- key: ``<group>/<run>.<page>`` as UTF-8: the logical consumer group, the id of the
  ``dlq replay`` run (a fresh message id, unique across hosts) and a page number unique in
  that run (increasing; not every number is written). Keys are never reused, so
  compaction never drops a page.
- value: a UTF-8 JSON object with exactly these fields:

  ===========  ==============================================================
  ``group``    logical consumer group whose DLQ held the messages
  ``who``      the operating-system user who ran the replay
  ``host``     the host it ran on
  ``when_ms``  epoch milliseconds of the replay (of this page's transaction)
  ``command``  the command line (secrets masked)
  ``replays``  one array per replayed dead letter, in the order of :data:`COLUMNS`
  ===========  ==============================================================

  :data:`COLUMNS`, each replay's array, in order:

  ===================  ====================================================
  ``dlq_id``           the dead letter's position ``<physical DLQ topic>@<partition>@<offset>``
                       (:func:`rmqcompat.wire.offset_message_id`)
  ``msg_id``           the dead letter's message id (``UNIQ_KEY``)
  ``origin_msg_id``    the id of the message as first sent (``ORIGIN_MESSAGE_ID``)
  ``original_topic``   the logical topic it was first sent to
  ``replayed_to``      the logical topic the replay went to (``%RETRY%G`` or original)
  ``replayed_msg_id``  the new message's id (its ``UNIQ_KEY``)
  ``replay``           0 for the first replay of this dead letter, n for the n-th forced one
  ===================  ====================================================

Each replay has an id, ``<group>/<dlq_id>`` with ``#<n>`` appended for the n-th forced
replay (:func:`ledger_key`, :attr:`LedgerEntry.key`); one dead letter per ``dlq_id``: a
message that dies again after a replay is a new dead letter with a new position. A
replayed message carries the headers ``REPLAY_ID`` (that id) and ``REPLAY_TIME``
(``when_ms``), so a consumer or an audit job never mistakes it for a first delivery.
:func:`read_ledger` gives one :class:`LedgerEntry` per replay. Read only committed
records (``isolation.level=read_committed``, librdkafka's default).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from confluent_kafka import Consumer, IsolationLevel, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from rmqcompat.config import ClientConfig
from rmqcompat.dlq.scan import REQUEST_TIMEOUT_S, reader, scan
from rmqcompat.errors import MalformedHeaderError
from rmqcompat.topics.naming import REPLAY_LOG_TOPIC, to_kafka_topic
from rmqcompat.topics.spec import TopicSpec

_log = logging.getLogger("rmqcompat.dlq")

#: How the ledger topic is created: one partition (one ordered log), compacted, forever.
LEDGER_SPEC = TopicSpec(partitions=1, configs={"cleanup.policy": "compact", "retention.ms": "-1"})

#: Replays per ledger record. A replay takes 150-250 bytes of JSON (at most about 700 with
#: the longest legal names), so a page stays far below Kafka's 1 MB record limit.
PAGE_SIZE = 500

#: The fields of one replay in a page's ``replays``, in order.
COLUMNS = (
    "dlq_id",
    "msg_id",
    "origin_msg_id",
    "original_topic",
    "replayed_to",
    "replayed_msg_id",
    "replay",
)
#: One replay as a page stores it, in :data:`COLUMNS` order.
Row = tuple[str, str, str, str, str, str, int]

_NEW_TOPIC_ERRORS = frozenset(
    {
        KafkaError.NOT_LEADER_FOR_PARTITION,
        KafkaError.LEADER_NOT_AVAILABLE,
        KafkaError.UNKNOWN_TOPIC_OR_PART,
    }
)
_RETRY_PAUSE_S = 0.05
_SHARED = ("group", "who", "host", "when_ms", "command")
_FIELDS = frozenset({*_SHARED, "replays"})
_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def ledger_topic(namespace: str) -> str:
    """The physical ledger topic of ``namespace``."""
    return to_kafka_topic(REPLAY_LOG_TOPIC, namespace)


def ledger_key(group: str, dlq_id: str, replay: int = 0) -> str:
    """The id of replay number ``replay`` of the dead letter at ``dlq_id`` of ``group``."""
    base = f"{group}/{dlq_id}"
    return f"{base}#{replay}" if replay else base


def page_key(group: str, run: str, page: int) -> str:
    """The record key of page ``page`` of replay run ``run`` of ``group``."""
    return f"{group}/{run}.{page}"


@dataclass(frozen=True)
class LedgerEntry:
    """One replay, as :func:`read_ledger` gives it: its row and its page's shared fields."""

    group: str
    dlq_id: str
    msg_id: str
    origin_msg_id: str
    original_topic: str
    replayed_to: str
    replayed_msg_id: str
    who: str
    host: str
    when_ms: int
    command: str
    replay: int = 0

    @property
    def key(self) -> str:
        """The replay's id, as in its message's ``REPLAY_ID`` header."""
        return ledger_key(self.group, self.dlq_id, self.replay)


@dataclass(frozen=True)
class LedgerPage:
    """One ledger record: replays of ``group`` that share who, host, time and command."""

    group: str
    who: str
    host: str
    when_ms: int
    command: str
    replays: Sequence[Row]

    def encode(self) -> bytes:
        """The record's value (the key is :func:`page_key`)."""
        return _encoder.encode(vars(self)).encode("utf-8")

    @classmethod
    def decode(cls, value: bytes) -> LedgerPage:
        """Raises MalformedHeaderError: ``value`` is not a ledger page."""
        try:
            document = json.loads(value.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise MalformedHeaderError(f"ledger record is not UTF-8 JSON: {exc}") from None
        if not isinstance(document, dict) or set(document) != _FIELDS:
            raise MalformedHeaderError(f"ledger record fields are not {sorted(_FIELDS)}")
        replays = document["replays"]
        if (
            type(document["when_ms"]) is not int
            or not all(isinstance(document[name], str) for name in _SHARED if name != "when_ms")
            or not isinstance(replays, list)
            or not all(_is_row(row) for row in replays)
        ):
            raise MalformedHeaderError("ledger record has a field of the wrong type")
        return cls(**{**document, "replays": [tuple(row) for row in replays]})

    def entries(self) -> Iterator[LedgerEntry]:
        """One entry per replay of the page, in order."""
        shared = (self.who, self.host, self.when_ms, self.command)
        for dlq_id, msg_id, origin, original, replayed_to, new_id, replay in self.replays:
            yield LedgerEntry(
                self.group, dlq_id, msg_id, origin, original, replayed_to, new_id, *shared, replay
            )


def _is_row(row: object) -> bool:
    return (
        isinstance(row, list)
        and len(row) == len(COLUMNS)
        and all(isinstance(value, str) for value in row[:-1])
        and type(row[-1]) is int
    )


def read_ledger(config: ClientConfig) -> Iterator[LedgerEntry]:
    """Every committed replay in the namespace's ledger, oldest first (none if it does not
    exist yet), up to the first transaction still open. A record that is not a page is
    logged and skipped."""
    for page in _pages(config):
        yield from page.entries()


def ledger_reader(config: ClientConfig) -> Consumer:
    """A consumer for :func:`replay_counts` (read-committed, no group); close it after."""
    return reader(config.librdkafka("consumer"))


def ledger_end(admin: AdminClient, namespace: str) -> dict[int, int]:
    """Partition -> high watermark of the namespace's ledger now, records of transactions
    still open included (read-uncommitted); empty if the ledger does not exist.

    Raises:
        KafkaException: the broker did not answer.
    """
    topic = ledger_topic(namespace)
    metadata = admin.list_topics(topic, timeout=REQUEST_TIMEOUT_S).topics.get(topic)
    if metadata is None or metadata.error is not None:
        return {}
    latest = OffsetSpec.latest()  # type: ignore[no-untyped-call]  # untyped in the stub
    wanted = {TopicPartition(topic, p): latest for p in metadata.partitions}
    deadline = time.monotonic() + REQUEST_TIMEOUT_S
    while True:
        answers = admin.list_offsets(
            wanted,
            isolation_level=IsolationLevel.READ_UNCOMMITTED,
            request_timeout=REQUEST_TIMEOUT_S,
        )
        try:
            return {tp.partition: future.result().offset for tp, future in answers.items()}
        except KafkaException as exc:
            # Apache Kafka answers NOT_LEADER_FOR_PARTITION for a moment after creating a
            # topic (the ledger, on a namespace's first replay), though metadata names one
            if exc.args[0].code() not in _NEW_TOPIC_ERRORS or time.monotonic() > deadline:
                raise
            time.sleep(_RETRY_PAUSE_S)


def replay_counts(
    config: ClientConfig,
    group: str,
    consumer: Consumer | None = None,
    until: Mapping[int, int] | None = None,
) -> dict[str, int]:
    """``dlq_id`` -> how many times that dead letter of ``group`` was replayed so far;
    read with ``consumer`` (a :func:`ledger_reader`, left open) if given.

    With ``until`` (:func:`ledger_end`), every record before it is read, however long the
    transactions of other groups' replays that hold them stay open: the ledger is one log,
    and read-committed reading alone would stop at the first open transaction and miss
    this group's later pages.
    """
    counts: dict[str, int] = {}
    for page in _pages(config, consumer, until):
        if page.group == group:
            for row in page.replays:
                dlq_id = row[0]
                counts[dlq_id] = max(counts.get(dlq_id, 0), row[-1] + 1)
    return counts


def _pages(
    config: ClientConfig,
    consumer: Consumer | None = None,
    until: Mapping[int, int] | None = None,
) -> Iterator[LedgerPage]:
    own = consumer is None
    consumer = consumer or ledger_reader(config)
    try:
        for record in scan(consumer, ledger_topic(config.namespace), until=until):
            try:
                yield LedgerPage.decode(record.value() or b"")
            except MalformedHeaderError as exc:
                _log.warning("ledger offset %s skipped: %s", record.offset(), exc)
    finally:
        if own:
            consumer.close()
