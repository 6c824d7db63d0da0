"""The ``*_async`` calls that run their blocking twin on a helper thread."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

_T = TypeVar("_T")


def in_thread(call: Callable[[], _T], name: str) -> Future[_T]:
    """``call()`` on a daemon thread named ``name``; the future gets its result or error."""
    future: Future[_T] = Future()

    def run() -> None:
        try:
            future.set_result(call())
        except BaseException as exc:
            future.set_exception(exc)

    threading.Thread(target=run, name=name, daemon=True).start()
    return future
