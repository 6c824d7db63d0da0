"""Client-generated message ids (RocketMQ's ``UNIQ_KEY``), unique across processes.

32 upper-case hex digits like RocketMQ's ``MessageClientIDSetter``: 8 random bytes drawn
per process (fresh after ``fork``), 4 bytes of seconds since the epoch, 4 bytes of a
per-process counter.
"""

from __future__ import annotations

import itertools
import os
import threading
import time

_lock = threading.Lock()
# The random part, already as the 16 upper-case hex digits it becomes in every id.
_prefix = ""
_counter: itertools.count[int] = itertools.count()


def _reset() -> None:
    global _prefix, _counter
    _prefix = os.urandom(8).hex().upper()
    _counter = itertools.count()


_reset()
os.register_at_fork(after_in_child=_reset)


def new_message_id() -> str:
    """Return a new message id (thread-safe)."""
    with _lock:
        sequence = next(_counter) & 0xFFFFFFFF
    seconds = int(time.time()) & 0xFFFFFFFF
    # Same text as (prefix + seconds + sequence, 4 bytes big-endian each).hex().upper().
    return _prefix + ((seconds << 32) | sequence).to_bytes(8, "big").hex().upper()
