"""The replay ledger: one record per dead letter replayed, durable and shared by every host.

Topic: logical ``RMQ_SYS_REPLAY_LOG``, physical ``<ns>.rmq.replay-log``
(:data:`rmqcompat.topics.naming.REPLAY_LOG_TOPIC`), one partition, compacted
(``cleanup.policy=compact``, kept forever). ``rmqcompat dlq replay`` creates it on first
use and writes each entry in the same Kafka transaction as the replayed message, so a
message is in the ledger exactly when its replay is visible to read-committed consumers.

Record format (the contract that audit jobs read):

- key: ``<group>/<dlq_id>`` as UTF-8, where ``<group>`` is the logical consumer group and
  ``<dlq_id>`` the position of the dead letter, ``<physical DLQ topic>@<partition>@<offset>``
  (:func:`rmqcompat.wire.offset_message_id`); a replay forced with ``--force`` of a dead
  letter already replayed ``n`` times appends ``#<n>``, so compaction never drops the
  record of a replay. One dead letter per key prefix: a message that dies again after a
  replay is a new dead letter with a new position.
- value: a UTF-8 JSON object with exactly these fields:

  ==================  =========================================================
  ``group``           logical consumer group whose DLQ held the message
  ``dlq_id``          the dead letter's position (as in the key)
  ``msg_id``          the dead letter's message id (``UNIQ_KEY``)
  ``origin_msg_id``   the id of the message as first sent (``ORIGIN_MESSAGE_ID``)
  ``original_topic``  the logical topic it was first sent to
  ``replayed_to``     the logical topic the replay went to (``%RETRY%G`` or original)
  ``replayed_msg_id`` the new message's id (its ``UNIQ_KEY``)
  ``who``             the operating-system user who ran the replay
  ``host``            the host it ran on
  ``when_ms``         epoch milliseconds of the replay
  ``command``         the command line (secrets masked)
  ``replay``          0 for the first replay of this dead letter, n for the n-th forced one
  ==================  =========================================================

A replayed message carries the headers ``REPLAY_ID`` (the ledger key) and ``REPLAY_TIME``
(``when_ms``), so a consumer or an audit job never mistakes it for a first delivery.
Read only committed records (``isolation.level=read_committed``, librdkafka's default).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, fields

from rmqcompat.config import ClientConfig
from rmqcompat.dlq.scan import reader, scan
from rmqcompat.errors import MalformedHeaderError
from rmqcompat.topics.naming import REPLAY_LOG_TOPIC, to_kafka_topic
from rmqcompat.topics.provision import ensure_topics
from rmqcompat.topics.spec import TopicSpec

_log = logging.getLogger("rmqcompat.dlq")

#: The header naming the ledger entry of a replayed message.
REPLAY_ID = "REPLAY_ID"
#: The header with the epoch milliseconds of the replay.
REPLAY_TIME = "REPLAY_TIME"

#: How the ledger topic is created: one partition (one ordered log), compacted, forever.
LEDGER_SPEC = TopicSpec(partitions=1, configs={"cleanup.policy": "compact", "retention.ms": "-1"})


def ledger_topic(namespace: str) -> str:
    """The physical ledger topic of ``namespace``."""
    return to_kafka_topic(REPLAY_LOG_TOPIC, namespace)


def ledger_key(group: str, dlq_id: str, replay: int = 0) -> str:
    """The ledger key of replay number ``replay`` of the dead letter at ``dlq_id`` of ``group``."""
    base = f"{group}/{dlq_id}"
    return f"{base}#{replay}" if replay else base


@dataclass(frozen=True)
class LedgerEntry:
    """One replay, as stored in the ledger (see the module's table)."""

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
        return ledger_key(self.group, self.dlq_id, self.replay)

    def encode(self) -> tuple[bytes, bytes]:
        """``(key, value)`` of the ledger record."""
        # vars(): asdict() deep-copies every field, a third of a replay's time
        return self.key.encode("utf-8"), json.dumps(vars(self)).encode("utf-8")

    @classmethod
    def decode(cls, value: bytes) -> LedgerEntry:
        """Raises MalformedHeaderError: ``value`` is not a ledger entry."""
        try:
            document = json.loads(value.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise MalformedHeaderError(f"ledger record is not UTF-8 JSON: {exc}") from None
        names = {f.name for f in fields(cls)}
        if not isinstance(document, dict) or set(document) != names:
            raise MalformedHeaderError(f"ledger record fields are not {sorted(names)}")
        numbers = {"when_ms", "replay"}
        if not all(type(document[name]) is int for name in numbers) or not all(
            isinstance(document[name], str) for name in names - numbers
        ):
            raise MalformedHeaderError("ledger record has a field of the wrong type")
        return cls(**document)


def ensure_ledger(config: ClientConfig) -> str:
    """Create the namespace's ledger topic unless it exists; its physical name."""
    ensure_topics(config.librdkafka("admin"), {REPLAY_LOG_TOPIC: LEDGER_SPEC}, config.namespace)
    return ledger_topic(config.namespace)


def read_ledger(config: ClientConfig) -> Iterator[LedgerEntry]:
    """Every committed entry of the namespace's ledger, oldest first (none if it does not
    exist yet). A record that is not an entry is logged and skipped.

    Waits while another replay's transaction on the ledger is open (one chunk).
    """
    consumer = reader(config.librdkafka("consumer"))
    try:
        for record in scan(consumer, ledger_topic(config.namespace)):
            try:
                yield LedgerEntry.decode(record.value() or b"")
            except MalformedHeaderError as exc:
                _log.warning("ledger offset %s skipped: %s", record.offset(), exc)
    finally:
        consumer.close()


def replay_counts(config: ClientConfig, group: str) -> dict[str, int]:
    """``dlq_id`` -> how many times that dead letter of ``group`` was replayed so far."""
    counts: dict[str, int] = {}
    for entry in read_ledger(config):
        if entry.group == group:
            counts[entry.dlq_id] = max(counts.get(entry.dlq_id, 0), entry.replay + 1)
    return counts
