"""The one tracing object a client is built with: a sink plus the client's emitter.

Call sites build an event only when tracing is on::

    if tracer.enabled:
        tracer.emit(tracer.events.publish(...))

``emit`` never blocks and never raises (see :mod:`.sink`).
"""

from __future__ import annotations

from dataclasses import dataclass

from rmqcompat.clock import Clock, epoch_ms
from rmqcompat.config import ClientConfig
from rmqcompat.trace.codec import TraceRecord
from rmqcompat.trace.events import Emitter, default_client_id
from rmqcompat.trace.sink import DisabledTraceSink, KafkaTraceSink, TraceSink, TraceStats


@dataclass(frozen=True)
class Tracer:
    """A client's trace sink and event builder.

    Args:
        sink: where events go.
        events: builds events stamped with the client's id, host, namespace and clock.
    """

    sink: TraceSink
    events: Emitter

    @classmethod
    def for_client(
        cls, client: ClientConfig, name: str, *, enabled: bool = True, clock: Clock = epoch_ms
    ) -> Tracer:
        """The tracer of a client called ``name`` (its group, or ``forwarder``): writes to
        the namespace's trace topic when ``enabled``, else ignores every event; events are
        stamped with ``clock`` (the client's own, so times compare with its decisions)."""
        sink: TraceSink = KafkaTraceSink(client) if enabled else DisabledTraceSink()
        return cls(sink, Emitter(default_client_id(name), client.namespace, clock))

    @classmethod
    def disabled(cls) -> Tracer:
        """A tracer that ignores every event (for clients built without one)."""
        return cls(DisabledTraceSink(), Emitter(default_client_id("untraced")))

    @property
    def enabled(self) -> bool:
        return self.sink.enabled

    def emit(self, event: TraceRecord) -> None:
        self.sink.emit(event)

    def start(self) -> None:
        self.sink.start()

    def close(self) -> None:
        self.sink.close()

    def stats(self) -> TraceStats:
        return self.sink.stats()
