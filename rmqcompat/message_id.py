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
_MASK = 0xFFFFFFFF


def _reset() -> None:
    global _prefix, _counter
    _prefix = os.urandom(8).hex().upper()
    _counter = itertools.count()


_reset()
os.register_at_fork(after_in_child=_reset)


def new_message_id() -> str:
    """Return a new message id (thread-safe)."""
    with _lock:
        sequence = next(_counter)
    return _text(int(time.time()), sequence)


def new_message_ids(count: int) -> list[str]:
    """Return ``count`` new message ids at once (thread-safe; one lock and one clock read
    for all of them, so a batch costs about half as much as single calls), each as
    :func:`new_message_id` makes it.

    Raises:
        ValueError: ``count`` is negative.
    """
    if count < 0:
        raise ValueError(f"count must be >= 0, not {count}")
    with _lock:
        sequences = list(itertools.islice(_counter, count))
    seconds = int(time.time())
    return [_text(seconds, sequence) for sequence in sequences]


def _text(seconds: int, sequence: int) -> str:
    """The id made at ``seconds`` with counter value ``sequence``: the prefix, then both as
    4 bytes big-endian each, in upper-case hex."""
    both = ((seconds & _MASK) << 32) | (sequence & _MASK)
    return _prefix + both.to_bytes(8, "big").hex().upper()
