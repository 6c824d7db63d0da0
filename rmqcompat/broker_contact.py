"""When a broker last answered a client, for health checks that notice a dead or frozen one.

Contact is observed in librdkafka's statistics (``stats_cb``, emitted every
``statistics.interval.ms`` while the client is polled): each emission carries, per
broker connection, ``rx``, the number of responses received. A client in a group or
fetching gets responses all the time (fetch long-polls, heartbeats, metadata), even on
an idle topic, so a count that grew means a broker answered since the last emission.
A dead broker (connection refused) and a frozen one (the connection stays open but
nothing comes back) both stop the count; the first response after it returns restarts
it. Error events are not needed for this and are left to librdkafka's own logging.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any

_log = logging.getLogger("rmqcompat.health")

#: Default of ``broker_contact_timeout_s``: a client with no broker response for this long
#: is unhealthy (librdkafka's own request timeouts are 30-60 s).
DEFAULT_BROKER_CONTACT_TIMEOUT_S = 30.0
#: Statistics come at least this often (and a third of the timeout when that is shorter),
#: so contact is noticed well within the timeout.
_MAX_INTERVAL_MS = 5000
_MIN_INTERVAL_MS = 100

StatsCallback = Callable[[str], None]


class BrokerContact:
    """The last time any broker answered any of the clients it observes.

    Thread-safe for readers (:meth:`unhealthy_reason` may run on any thread); the stats
    callbacks run on the threads that poll the clients. Starting counts as contact (a
    client's ``start()`` has just reached a broker).
    """

    def __init__(self, timeout_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        if not timeout_s > 0:
            raise ValueError(f"broker contact timeout must be > 0, not {timeout_s}")
        self.timeout_s = timeout_s
        self._clock = clock
        self._last = clock()
        self._responses: dict[str, int] = {}  # client name -> responses seen so far

    def observe(self, settings: dict[str, Any]) -> dict[str, Any]:
        """``settings`` for one more client whose statistics feed this observer.

        A ``stats_cb`` of the user's is still called; a ``statistics.interval.ms`` of
        theirs is kept if it is shorter than the one contact tracking needs.
        """
        user_cb: StatsCallback | None = settings.get("stats_cb")

        def on_stats(text: str) -> None:
            self.on_stats(text)
            if user_cb is not None:
                user_cb(text)

        interval = int(min(_MAX_INTERVAL_MS, max(_MIN_INTERVAL_MS, self.timeout_s * 1000 / 3)))
        user_interval = int(settings.get("statistics.interval.ms", 0) or 0)
        if 0 < user_interval < interval:
            interval = user_interval
        return {**settings, "stats_cb": on_stats, "statistics.interval.ms": interval}

    def on_stats(self, text: str) -> None:
        """Note contact if the client of this statistics emission got a response since its
        previous one."""
        try:
            stats = json.loads(text)
            name = str(stats["name"])
            received = sum(int(b.get("rx", 0)) for b in stats.get("brokers", {}).values())
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            _log.debug("unreadable librdkafka statistics: %r", exc)
            return
        if received > self._responses.get(name, 0):
            self._last = self._clock()
        self._responses[name] = received

    def silent_s(self) -> float:
        """Seconds since a broker last answered."""
        return self._clock() - self._last

    def unhealthy_reason(self) -> str | None:
        """Why the broker counts as lost, or None while it answers."""
        silent = self.silent_s()
        if silent <= self.timeout_s:
            return None
        return f"no response from any broker for {silent:.0f} s (limit {self.timeout_s:g} s)"
