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
_prefix = b""
_counter: itertools.count[int] = itertools.count()


def _reset() -> None:
    global _prefix, _counter
    _prefix = os.urandom(8)
    _counter = itertools.count()


_reset()
os.register_at_fork(after_in_child=_reset)


def new_message_id() -> str:
    """Return a new message id (thread-safe)."""
    with _lock:
        sequence = next(_counter) & 0xFFFFFFFF
    seconds = int(time.time()) & 0xFFFFFFFF
    return (_prefix + seconds.to_bytes(4, "big") + sequence.to_bytes(4, "big")).hex().upper()
