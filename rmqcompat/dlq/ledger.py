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
- value: UTF-8 text, in one of two formats (:mod:`rmqcompat.dlq.page` writes format 2
  when it can; readers must take both, ledgers are kept forever). Either way a page has
  the shared fields

  ===========  ==============================================================
  ``group``    logical consumer group whose DLQ held the messages
  ``who``      the operating-system user who ran the replay
  ``host``     the host it ran on
  ``when_ms``  epoch milliseconds of the replay (of this page's transaction)
  ``command``  the command line (secrets masked)
  ===========  ==============================================================

  and one row per replayed dead letter, with these fields (:data:`COLUMNS`):

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

  Format 2 (written since 2026-11, about 95 bytes a replay): a JSON object with exactly
  the shared fields and ``"format": 2`` on the first line; then one line per replay
  (lines end with ``\n``, none after the last), its fields separated by tabs, in one of
  three shapes:

  - 7 fields: ``dlq_id``, ``msg_id``, ``replayed_msg_id``, ``replay`` (decimal, no
    leading zeros), ``origin_msg_id``, ``original_topic``, ``replayed_to``; the first
    row always has 7;
  - 5 fields: the first 5 of those; both topics are the row above's;
  - 4 fields: the first 4; ``origin_msg_id`` is ``msg_id`` and both topics are the row
    above's.

  A page with a tab or a line break in a field is written in format 1.

  Format 1 (every page before format 2): one JSON object with exactly the shared fields
  and ``replays``: one array per replay, its fields in :data:`COLUMNS` order. It has no
  line break (JSON escapes them), which tells the formats apart.

Each replay has an id, ``<group>/<dlq_id>`` with ``#<n>`` appended for the n-th forced
replay (:func:`ledger_key`, :attr:`LedgerEntry.key`); one dead letter per ``dlq_id``: a
message that dies again after a replay is a new dead letter with a new position. A
replayed message carries the headers ``REPLAY_ID`` (that id) and ``REPLAY_TIME``
(``when_ms``), so a consumer or an audit job never mistakes it for a first delivery.
:func:`read_ledger` gives one :class:`LedgerEntry` per replay. Read only committed
records (``isolation.level=read_committed``, librdkafka's default).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping

from confluent_kafka import Consumer, IsolationLevel, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from rmqcompat.config import ClientConfig
from rmqcompat.dlq.page import (
    COLUMNS,
    PAGE_SIZE,
    LedgerEntry,
    LedgerPage,
    Row,
    ledger_key,
    page_key,
)
from rmqcompat.dlq.scan import REQUEST_TIMEOUT_S, reader, scan
from rmqcompat.errors import MalformedHeaderError
from rmqcompat.topics.naming import REPLAY_LOG_TOPIC, to_kafka_topic

__all__ = [
    "COLUMNS",
    "PAGE_SIZE",
    "LedgerEntry",
    "LedgerPage",
    "Row",
    "ledger_end",
    "ledger_key",
    "ledger_reader",
    "ledger_topic",
    "page_key",
    "read_ledger",
    "replay_counts",
]

_log = logging.getLogger("rmqcompat.dlq")


_NEW_TOPIC_ERRORS = frozenset(
    {
        KafkaError.NOT_LEADER_FOR_PARTITION,
        KafkaError.LEADER_NOT_AVAILABLE,
        KafkaError.UNKNOWN_TOPIC_OR_PART,
    }
)
_RETRY_PAUSE_S = 0.05


def ledger_topic(namespace: str) -> str:
    """The physical ledger topic of ``namespace``."""
    return to_kafka_topic(REPLAY_LOG_TOPIC, namespace)


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
