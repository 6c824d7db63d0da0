"""Ledger pages: one ledger record, its replays and the fields they share, in the two
formats pages have been written in (the contract is in :mod:`rmqcompat.dlq.ledger`).

:meth:`LedgerPage.encode` writes format 2, compact text; a page that format cannot hold
(a field with a tab or a line break) is written in format 1, JSON, as every page was
before. :meth:`LedgerPage.decode` reads both: ledgers are kept forever.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from rmqcompat.core import CORE
from rmqcompat.errors import MalformedHeaderError

#: Replays per ledger record. A replay takes 60-250 bytes (at most about 700 with the
#: longest legal names), so a page stays far below Kafka's 1 MB record limit.
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

#: The format :meth:`LedgerPage.encode` writes when it can.
COMPACT_FORMAT = 2

_SHARED = ("group", "who", "host", "when_ms", "command")
_FIELDS = frozenset({*_SHARED, "replays"})
_COMPACT_FIELDS = frozenset({"format", *_SHARED})
_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def ledger_key(group: str, dlq_id: str, replay: int = 0) -> str:
    """The id of replay number ``replay`` of the dead letter at ``dlq_id`` of ``group``."""
    base = f"{group}/{dlq_id}"
    return f"{base}#{replay}" if replay else base


def page_key(group: str, run: str, page: int) -> str:
    """The record key of page ``page`` of replay run ``run`` of ``group``."""
    return f"{group}/{run}.{page}"


@dataclass(frozen=True)
class LedgerEntry:
    """One replay, as :func:`~rmqcompat.dlq.ledger.read_ledger` gives it: its row and its
    page's shared fields."""

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
        """The record's value (the key is :func:`page_key`): format 2 when every field
        fits it, else format 1."""
        return self._compact() or self.encode_json()

    def encode_json(self) -> bytes:
        """The record's value in format 1 (JSON), which holds any page."""
        return _encoder.encode(vars(self)).encode("utf-8")

    @classmethod
    def decode(cls, value: bytes) -> LedgerPage:
        """The page in ``value``, format 2 or 1.

        Raises:
            MalformedHeaderError: ``value`` is not a ledger page.
        """
        try:
            text = value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise MalformedHeaderError(f"ledger record is not UTF-8: {exc}") from None
        # format 1 is one JSON document, and JSON escapes every line break in its strings
        head, compact, body = text.partition("\n")
        if not compact:
            document = _json(text, _FIELDS)
            replays = document["replays"]
            if not isinstance(replays, list) or not all(map(_is_row, replays)):
                raise MalformedHeaderError("ledger record has a replay of the wrong shape")
            return cls(**{**document, "replays": [tuple(row) for row in replays]})
        document = _json(head, _COMPACT_FIELDS)
        if document.pop("format") != COMPACT_FORMAT:
            raise MalformedHeaderError(f"ledger record format is not {COMPACT_FORMAT}")
        return cls(**document, replays=_rows(body))

    def entries(self) -> Iterator[LedgerEntry]:
        """One entry per replay of the page, in order."""
        shared = (self.who, self.host, self.when_ms, self.command)
        for dlq_id, msg_id, origin, original, replayed_to, new_id, replay in self.replays:
            yield LedgerEntry(
                self.group, dlq_id, msg_id, origin, original, replayed_to, new_id, *shared, replay
            )

    def _compact(self) -> bytes | None:
        """Format 2, or None if a field holds a tab or a line break (see the ledger)."""
        body = active_compact_rows(self.replays)
        if body is None:
            return None
        shared = {name: getattr(self, name) for name in _SHARED}
        return f"{_encoder.encode({'format': COMPACT_FORMAT, **shared})}\n{body}".encode()


def compact_rows(replays: Sequence[Row]) -> str | None:
    """The body of a format 2 page: a line per replay, its topics and origin id left out
    where the line above says them (see the ledger); None if a field holds a tab or a
    line break. The pure-Python reference of the core's ``compact_rows``: the same
    answer for every input (``tests/unit/dlq/test_replay_core_parity.py``)."""
    lines: list[str] = []
    add = lines.append
    tabs = 0
    above: tuple[str, str] | None = None  # the topics of the row above
    for dlq_id, msg_id, origin, original, replayed_to, new_id, replay in replays:
        if above is not None and original == above[0] and replayed_to == above[1]:
            if origin == msg_id:
                add(f"{dlq_id}\t{msg_id}\t{new_id}\t{replay}")
                tabs += 3
                continue
            add(f"{dlq_id}\t{msg_id}\t{new_id}\t{replay}\t{origin}")
            tabs += 4
            continue
        add(f"{dlq_id}\t{msg_id}\t{new_id}\t{replay}\t{origin}\t{original}\t{replayed_to}")
        tabs += 6
        above = (original, replayed_to)
    body = "\n".join(lines)
    if body.count("\t") != tabs or body.count("\n") != len(lines) - (1 if lines else 0):
        return None  # a field holds a separator
    return body


#: Writing a page's lines took about 0.3 us a replay in Python.
active_compact_rows = compact_rows if CORE is None else CORE.compact_rows


def _json(text: str, fields: frozenset[str]) -> dict[str, Any]:
    """The JSON object in ``text`` with exactly ``fields``, shared ones type-checked."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedHeaderError(f"ledger record is not JSON: {exc}") from None
    if not isinstance(document, dict) or set(document) != fields:
        raise MalformedHeaderError(f"ledger record fields are not {sorted(fields)}")
    if type(document["when_ms"]) is not int or not all(
        isinstance(document[name], str) for name in _SHARED if name != "when_ms"
    ):
        raise MalformedHeaderError("ledger record has a field of the wrong type")
    return document


def _is_row(row: object) -> bool:
    return (
        isinstance(row, list)
        and len(row) == len(COLUMNS)
        and all(isinstance(value, str) for value in row[:-1])
        and type(row[-1]) is int
    )


def _rows(body: str) -> list[Row]:
    """The replays of a format 2 page's ``body`` (see the ledger's docstring)."""
    rows: list[Row] = []
    original = replayed_to = None
    for line in body.split("\n") if body else ():
        fields = line.split("\t")
        if len(fields) == 7:
            dlq_id, msg_id, new_id, replay, origin, original, replayed_to = fields
        elif len(fields) in (4, 5) and original is not None and replayed_to is not None:
            dlq_id, msg_id, new_id, replay = fields[:4]
            origin = fields[4] if len(fields) == 5 else msg_id
        else:
            raise MalformedHeaderError(f"ledger row has {len(fields)} fields: {line!r}")
        rows.append((dlq_id, msg_id, origin, original, replayed_to, new_id, _number(replay)))
    return rows


def _number(text: str) -> int:
    """A replay number as format 2 writes it (``str`` of an int, nothing else)."""
    try:
        number = int(text)
    except ValueError:
        number = None
    if number is None or str(number) != text:
        raise MalformedHeaderError(f"ledger row's replay number is not an integer: {text!r}")
    return number
