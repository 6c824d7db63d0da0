"""The seam between the consumer engine and the ways messages reach a listener.

The engine (:mod:`rmqcompat.consumer.engine`) owns fetching, process queues, offsets,
flow control and group membership, and is the same for every kind of consumption. How
fetched messages reach the listener and what happens to their results is a consume
service behind this one narrow interface: concurrent consumption
(:mod:`rmqcompat.consumer.concurrent`) and orderly consumption
(:mod:`rmqcompat.consumer.orderly`: one call per partition at a time, retried in
place). The shape follows rocketmq-clients' ``Consumption``/``FifoConsumption`` and
arroyo's processing strategies.

Every method is called on the poll thread only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from rmqcompat.message import MessageExt
from rmqcompat.wire import Key


class ConsumeService(Protocol):
    def submit(self, staged: Mapping[Key, list[MessageExt]]) -> None:
        """Hand over the messages fetched now, per partition, in offset order; they are
        already in their process queues, and leave them only through this service."""

    def settle(self) -> None:
        """Settle every listener result available now (release, send back, dead-letter)."""

    def busy(self) -> bool:
        """Whether listener calls are under way, so the engine may wait for results."""

    def saturated(self, timeout_s: float) -> bool:
        """With a whole fetch still waiting for the listener, wait up to ``timeout_s`` for
        room: True if room appeared (the engine then skips this fetch). Fetching more
        would only grow what is held until flow control pauses partitions."""

    def wait(self, timeout_s: float) -> bool:
        """Block up to ``timeout_s`` until a listener call finished; False: timed out."""

    def housekeeping(self, now: float) -> None:
        """Timed work at monotonic time ``now`` (re-consumes after a failed send-back,
        consume timeouts)."""

    def quiet(self) -> bool:
        """Nothing running and nothing awaiting a broker's answer: safe to commit and stop."""

    def shutdown(self) -> None:
        """Stop the listener threads once their current calls return (does not wait)."""
