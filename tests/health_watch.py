"""Watches the ``/health`` endpoints of running services during a fault test (no tests
here): how long each one was unhealthy after it had been healthy once."""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable

_EVERY_S = 0.25


def healthy(port: int) -> bool:
    """Whether ``127.0.0.1:port/health`` answers 200 (a refused connection: not healthy)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as reply:
            return bool(reply.status == 200)
    except (urllib.error.URLError, OSError):
        return False


class HealthWatch:
    """Polls the ports ``ports()`` names now, every 0.25 s, on a thread of its own.

    ``longest_unhealthy_s``: the longest stretch any port answered anything but 200 after
    it had answered 200 once (a service not yet started or not yet assigned does not
    count; one stopped on purpose leaves ``ports()`` and is no longer polled).
    """

    def __init__(self, ports: Callable[[], list[int]]) -> None:
        self._ports = ports
        self._since: dict[int, float | None] = {}  # port -> unhealthy since (None: healthy)
        self.longest_unhealthy_s = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="health-watch", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(_EVERY_S):
            now = time.monotonic()
            for port in self._ports():
                self._note(port, healthy(port), now)

    def _note(self, port: int, is_healthy: bool, now: float) -> None:
        if port not in self._since:
            if is_healthy:
                self._since[port] = None  # healthy once: from now on it counts
            return
        since = self._since[port]
        if is_healthy and since is not None:
            self.longest_unhealthy_s = max(self.longest_unhealthy_s, now - since)
            self._since[port] = None
        elif not is_healthy and since is None:
            self._since[port] = now
