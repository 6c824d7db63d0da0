"""Dead letters: read (list, show, filters), export and import (JSON Lines, Avro), replay
exactly once with a durable ledger, purge. The ``rmqcompat dlq`` commands delegate here."""

from rmqcompat.dlq.errors import BadTimeError, UnknownGroupError
from rmqcompat.dlq.filters import DeadLetterFilter, parse_time
from rmqcompat.dlq.ledger import LedgerEntry, read_ledger
from rmqcompat.dlq.model import DeadLetter
from rmqcompat.dlq.reader import GroupDeadLetters, list_dead_letter_groups, read_dead_letters
from rmqcompat.dlq.replay import Operator, Replayer, ReplayOptions, ReplaySummary

__all__ = [
    "BadTimeError",
    "DeadLetter",
    "DeadLetterFilter",
    "GroupDeadLetters",
    "LedgerEntry",
    "Operator",
    "ReplayOptions",
    "ReplaySummary",
    "Replayer",
    "UnknownGroupError",
    "list_dead_letter_groups",
    "parse_time",
    "read_dead_letters",
    "read_ledger",
]
