"""Callbacks that wait for a delivery report: a function with its first arguments, called
later with the rest (:func:`bound_call`, :func:`functools.partial` as the reference).

A consumer keeps one or more of them per send-back in flight, a few thousand at once on a
busy one, until the broker answers. The compiled core's ``bound_call`` makes the same
callback out of the cyclic collector's sight, as CPython leaves tuples of plain values:
such a callback holds only what it is handed and nothing but the client it waits in
holds it, so it is in no cycle, and the collector need not walk it at every young
collection and promote it while it waits.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from rmqcompat.core import CORE


def bound_call(func: Callable[..., Any], /, *args: Any) -> Callable[..., Any]:
    """``func`` with its first ``args``: called with more, ``func(*args, *more)`` (the
    pure-Python reference of the core's ``bound_call``)."""
    return partial(func, *args)


#: :func:`bound_call`, the core's where it is built: what the send-back path makes its
#: callbacks with
callback: Callable[..., Callable[..., Any]] = bound_call if CORE is None else CORE.bound_call
