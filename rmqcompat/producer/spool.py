"""Durable spool: messages whose send failed for a retriable reason, kept on local disk.

One JSON file per message, written atomically (write a temp file, fsync, rename, fsync the
directory), so a crash leaves either the whole entry or none. An entry holds the exact
record (physical topic, key, value, headers with the original ``UNIQ_KEY``), so a re-send
is the same message. Files are deleted only after the broker acknowledged the re-send.
Entries hold message bodies: files are created 0600 and a directory the spool creates 0700.
"""

from __future__ import annotations

import base64
import builtins
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rmqcompat.errors import RmqCompatError
from rmqcompat.topics.naming import from_kafka_topic
from rmqcompat.wire import OutgoingRecord

log = logging.getLogger(__name__)

_SUFFIX = ".json"
_TMP_PREFIX = ".tmp-"
_FORMAT = 1
_FILE_MODE = 0o600
_DIR_MODE = 0o700


class SpoolCorruptError(RmqCompatError):
    """A spool file cannot be read as an entry (it is left in place for inspection).

    Attributes:
        path: the file.
    """

    def __init__(self, path: Path, reason: object) -> None:
        super().__init__(f"spool file {path} is not a valid entry: {reason}")
        self.path = path


@dataclass(frozen=True)
class SpoolEntry:
    """One spooled message: the record to re-send and why it was spooled."""

    msg_id: str
    record: OutgoingRecord
    spooled_at_ms: int
    code: str | None = None
    attempts: int = 0

    @property
    def name(self) -> str:
        """The file name: spool time first, so a directory listing is in spool order."""
        return f"{self.spooled_at_ms:015d}-{self.msg_id}{_SUFFIX}"

    @property
    def namespace_and_topic(self) -> tuple[str, str]:
        """(namespace, logical topic) of the record's physical topic."""
        return from_kafka_topic(self.record.topic)

    def to_json(self) -> dict[str, Any]:
        rec = self.record
        return {
            "format": _FORMAT,
            "msg_id": self.msg_id,
            "topic": rec.topic,
            "partition": rec.partition,
            "key": _b64(rec.key),
            "value": _b64(rec.value),
            "headers": [[name, _b64(value)] for name, value in rec.headers],
            "spooled_at_ms": self.spooled_at_ms,
            "code": self.code,
            "attempts": self.attempts,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SpoolEntry:
        record = OutgoingRecord(
            topic=str(data["topic"]),
            value=_unb64(data["value"]) or b"",
            key=_unb64(data["key"]),
            headers=[(str(name), _unb64(value) or b"") for name, value in data["headers"]],
            partition=data.get("partition"),
        )
        return cls(
            msg_id=str(data["msg_id"]),
            record=record,
            spooled_at_ms=int(data["spooled_at_ms"]),
            code=data.get("code"),
            attempts=int(data.get("attempts", 0)),
        )


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def _unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text, validate=True)


class Spool:
    """A directory of spooled messages; usable with or without a running producer.

    The constructor does no I/O; the directory is created on the first :meth:`put`.
    Methods block on local disk I/O only. Thread-safe: entries are separate files.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    def put(self, entry: SpoolEntry) -> Path:
        """Write ``entry`` durably and return its path (overwrites an identical name)."""
        self.directory.mkdir(mode=_DIR_MODE, parents=True, exist_ok=True)
        path = self.directory / entry.name
        tmp = self.directory / f"{_TMP_PREFIX}{entry.name}"
        data = json.dumps(entry.to_json(), separators=(",", ":")).encode("utf-8")
        # Created 0600 (not chmod-ed later): the body is never readable by others.
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        with os.fdopen(os.open(tmp, flags, _FILE_MODE), "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
        _fsync_dir(self.directory)
        return path

    def load(self, path: Path) -> SpoolEntry:
        """Read one entry.

        Raises:
            SpoolCorruptError: the file cannot be read (permissions) or is not a complete
                spool entry.
        """
        try:
            return SpoolEntry.from_json(json.loads(path.read_bytes()))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise SpoolCorruptError(path, exc) from exc

    def scan(self) -> tuple[list[SpoolEntry], list[SpoolCorruptError]]:
        """Every readable entry (oldest first) and why each other file could not be read."""
        entries, unreadable = [], []
        for path in self.paths():
            try:
                entries.append(self.load(path))
            except SpoolCorruptError as exc:
                unreadable.append(exc)
        return entries, unreadable

    def list(self) -> list[SpoolEntry]:
        """Every readable entry, oldest first; unreadable files are logged and left alone."""
        entries, unreadable = self.scan()
        for problem in unreadable:
            log.warning("%s", problem)
        return entries

    # builtins.list: in this class body ``list`` is the method above.
    def paths(self) -> builtins.list[Path]:
        if not self.directory.is_dir():
            return []
        return sorted(
            path
            for path in self.directory.iterdir()
            if path.name.endswith(_SUFFIX) and not path.name.startswith(_TMP_PREFIX)
        )

    def remove(self, entry: SpoolEntry) -> None:
        """Delete ``entry``'s file (call only after its re-send was acknowledged)."""
        (self.directory / entry.name).unlink(missing_ok=True)

    def __len__(self) -> int:
        return len(self.paths())


def _fsync_dir(directory: Path) -> None:
    # The rename is durable only once the directory entry itself is on disk.
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
