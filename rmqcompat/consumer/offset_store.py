"""Local offset file of broadcasting consumers (RocketMQ's ``LocalFileOffsetStore``).

The file is JSON ``{"offsets": {"<kafka topic>": {"<partition>": next_offset}}}``. Writes
are atomic as in RocketMQ's ``MixAll.string2File``: the new content goes to ``.tmp``, the
previous content is kept as ``.bak``, then ``.tmp`` is renamed over the file. A reader
that finds the file missing or unreadable falls back to ``.bak``.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

_log = logging.getLogger("rmqcompat.consumer")

Offsets = dict[tuple[str, int], int]


class LocalFileOffsetStore:
    """Reads and writes one offsets file; not thread-safe (the poll thread owns it).

    ``persist`` raises ``OSError`` when the file cannot be written; ``load`` never raises
    for a corrupt file (it logs and uses ``.bak``, or starts empty).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._tmp = path.with_name(path.name + ".tmp")
        self._bak = path.with_name(path.name + ".bak")

    def load(self) -> Offsets:
        for candidate in (self.path, self._bak):
            try:
                return _parse(candidate.read_text("utf-8"))
            except FileNotFoundError:
                continue
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                _log.error("offset file %s is unreadable (%s); trying the backup", candidate, exc)
        return {}

    def persist(self, offsets: Offsets) -> None:
        """Write ``offsets`` (merged over what the file holds) atomically."""
        merged = self.load()
        merged.update(offsets)
        table: dict[str, dict[str, int]] = {}
        for (topic, partition), offset in sorted(merged.items()):
            table.setdefault(topic, {})[str(partition)] = offset
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self._tmp, "w", encoding="utf-8") as out:
            json.dump({"offsets": table}, out, indent=2)
            out.flush()
            os.fsync(out.fileno())
        if self.path.exists():
            # the previous content survives as .bak, so a crash mid-write loses nothing
            _copy(self.path, self._bak)
        os.replace(self._tmp, self.path)


def _copy(src: Path, dst: Path) -> None:
    dst.write_bytes(src.read_bytes())


def _parse(text: str) -> Offsets:
    table = json.loads(text)["offsets"]
    return {
        (topic, int(partition)): int(offset)
        for topic, partitions in table.items()
        for partition, offset in partitions.items()
    }
