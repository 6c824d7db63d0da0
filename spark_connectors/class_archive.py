"""A class-data-sharing archive of the classes a local audit's JVM loads.

A fresh ``rmqcompat audit`` spends most of its fixed cost starting Spark, and much of that
loading and verifying some 20,000 classes from jars. The JVM (13+) can instead map them
from an archive: ``-XX:ArchiveClassesAtExit`` writes one as the JVM exits, and
``-XX:SharedArchiveFile`` maps it. An audit of an empty trace topic on ``local[2]``
took 12.9 s without and 9.0 s with one (3 alternating pairs, 2026-11-24).

The first local audit the command line runs writes the archive (about 180 MB, some 20 s
more as its JVM exits) to a file of its own and publishes it under the archive's name by
a rename, whole or not at all, since other audits may start meanwhile. The name holds a
digest of the ``java`` binary and of pyspark's version: another JVM or Spark makes an
archive of its own rather than use one that does not match it (the JVM would ignore a
mismatched one: sharing is on only when the archive maps, ``-Xshare:auto``).
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path

import pyspark

from rmqcompat.java import java_on_path

#: The JVM's notes on classes it cannot archive (thousands, on every first audit) and on an
#: archive it cannot map: neither changes what the audit does.
QUIET = "-Xlog:cds=off,cds+dynamic=off"
#: A file being written is left alone this long; one older is left over from an audit that
#: stopped before publishing it, and is removed.
STALE_AFTER_S = 3600.0


@dataclass(frozen=True)
class ClassArchive:
    """The archive at ``path``, written by this process to :attr:`partial` if missing."""

    path: Path

    @classmethod
    def in_directory(cls, directory: Path) -> ClassArchive | None:
        """The archive for the ``java`` Spark will start and this pyspark, in
        ``directory``; None when there is no ``java``."""
        java = java_on_path()
        if java is None:
            return None
        binary = Path(java).resolve()
        identity = f"{binary}\0{binary.stat().st_mtime_ns}\0{pyspark.__version__}"
        digest = hashlib.sha256(identity.encode()).hexdigest()[:16]
        return cls(directory / f"spark-{pyspark.__version__}-{digest}.jsa")

    @property
    def partial(self) -> Path:
        """Where this process's JVM writes the archive before it is published."""
        return self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")

    @property
    def failed(self) -> Path:
        """Left by a JVM that did not write the archive cleanly: no JVM tries again (each
        would wait as long again) until it is removed."""
        return self.path.with_name(f"{self.path.name}.failed")

    def java_options(self) -> str:
        """The JVM options that map the archive, or write it if there is none yet (or
        nothing when its directory cannot be written, or writing it failed before, or its
        path holds a space or quote, which Spark would split the options at)."""
        if any(char.isspace() or char in "'\"" for char in str(self.path)):
            return ""
        if self.path.is_file():
            return f"-XX:SharedArchiveFile={self.path} {QUIET}"
        if self.failed.exists():
            return ""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError:
            return ""
        if not os.access(self.path.parent, os.W_OK):
            return ""
        self._remove_stale()
        return f"-XX:ArchiveClassesAtExit={self.partial} {QUIET}"  # see written_by

    def written_by(self, java_options: str) -> bool:
        """Whether a JVM started with ``java_options`` writes :attr:`partial`."""
        return f"-XX:ArchiveClassesAtExit={self.partial}" in java_options.split()

    def publish(self) -> bool:
        """After the JVM that wrote :attr:`partial` exited: publish it; whether there was
        one to publish."""
        try:
            if self.partial.stat().st_size == 0:
                self.partial.unlink()
                return False
            self.partial.replace(self.path)
        except OSError:
            return False
        return True

    def discard(self) -> None:
        """Remove :attr:`partial` (its JVM did not exit cleanly, so it may be incomplete,
        or wrote nothing) and leave :attr:`failed`."""
        self.partial.unlink(missing_ok=True)
        try:
            self.failed.touch()
        except OSError:
            pass  # the cache went read-only: the next audit finds no folder to write in

    def _remove_stale(self) -> None:
        cutoff = time.time() - STALE_AFTER_S
        for leftover in self.path.parent.glob(f"{self.path.name}.*.tmp"):
            try:
                if leftover.stat().st_mtime < cutoff:
                    leftover.unlink()
            except OSError:
                continue  # removed by another audit meanwhile
