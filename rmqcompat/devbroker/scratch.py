"""Temporary data directories of dev brokers, in memory where the machine offers it.

A dev broker's temporary data is deleted when it stops, so keeping it on disk buys
nothing, and disk costs: Apache Kafka syncs its KRaft metadata log on every commit and
its producer snapshots and checkpoints on every roll and recovery. On a loaded disk the
recovery of a node killed with SIGKILL once spent 8.8 s writing 13 producer snapshots.
``/dev/shm`` (tmpfs, Linux) keeps the same files in memory.

Memory is not bounded: tmpfs grows with every record the broker keeps (Kafka deletes
nothing for seven days), up to the machine's memory, and then the kernel kills the
largest process (measured: a long-lived dev broker under benchmarks for half an hour took
23 GB of a 24 GB machine, and the OOM killer took its JVM). So memory is for brokers
whose life is short (the tests', a benchmark's own); a broker a user keeps running
(``rmqcompat dev-broker``) keeps its data on disk unless asked otherwise.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

#: Linux's memory-backed file system, present on any modern distribution.
MEMORY_ROOT = Path("/dev/shm")  # noqa: S108 - a fixed, well-known mount, not a guessable file
#: Free space :data:`MEMORY_ROOT` must have to be used: a container's is often 64 MiB,
#: which a broker's logs would fill (the broker then stops with a full disk).
MIN_FREE_BYTES = 4 * 1024**3


def throwaway_dir(prefix: str, *, in_memory: bool = True) -> Path:
    """Create a new temporary directory for data deleted at stop, and return it.

    With ``in_memory`` it is made in :data:`MEMORY_ROOT` when that is a writable
    directory with at least :data:`MIN_FREE_BYTES` free and ``TMPDIR`` is not set;
    otherwise where :mod:`tempfile` puts it (``TMPDIR``, else ``/tmp``). A process killed
    before it cleans up leaves the directory behind, in memory until the next reboot or
    until removed.
    """
    return Path(tempfile.mkdtemp(prefix=prefix, dir=_memory_root() if in_memory else None))


def _memory_root() -> Path | None:
    if os.environ.get("TMPDIR"):
        return None  # the user chose where temporary files go
    if not (MEMORY_ROOT.is_dir() and os.access(MEMORY_ROOT, os.W_OK | os.X_OK)):
        return None
    return MEMORY_ROOT if shutil.disk_usage(MEMORY_ROOT).free >= MIN_FREE_BYTES else None
