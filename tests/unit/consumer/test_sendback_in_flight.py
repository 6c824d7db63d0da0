"""What a send-back keeps alive while it waits for its delivery report (issue 11).

The cyclic collector runs after every few hundred container objects that stay allocated,
and each full run walks everything alive: the retry round trip spent a fifth of the
consumer's CPU in it while each send-back in flight held two closures with their cells,
the record and its header tuples. Its callbacks are small and, with the compiled core,
out of the collector's sight.
"""

from __future__ import annotations

import gc

import pytest
from test_consumer_settlement import KEY
from unit_fakes import ReportingClient

from rmqcompat.config import ClientConfig
from rmqcompat.consumer.dispatch import ConsumeBatch
from rmqcompat.consumer.listener import ConsumeConcurrentlyContext, ConsumeConcurrentlyStatus
from rmqcompat.consumer.partitions import Partitions
from rmqcompat.consumer.sendback import RecordSink, SendBack
from rmqcompat.consumer.settings import ConsumerSettings
from rmqcompat.consumer.settlement import Settlement
from rmqcompat.core import CORE
from rmqcompat.message import MessageExt, MessageQueue
from rmqcompat.trace import Emitter, Tracer
from rmqcompat.trace.sink import DisabledTraceSink

SENDS = 2_000
#: Objects the test run itself may make meanwhile (not per send-back).
SLACK = 100


def _tracked() -> int:
    gc.collect()  # also untracks tuples of atomic values, as any collection would
    return len(gc.get_objects())


class _DiscardingSink(DisabledTraceSink):
    """A trace sink that is on and keeps nothing (what it is handed is not the subject)."""

    enabled = True  # type: ignore[assignment]


@pytest.mark.parametrize("traced", [False, True])
def test_a_send_back_awaiting_its_report_keeps_few_small_objects_alive_and_none_after(
    traced: bool,
) -> None:
    settings = ConsumerSettings("g", ClientConfig("127.0.0.1:1"))
    partitions = Partitions(settings, lambda offsets, asynchronous: None)
    partitions.add(KEY, MessageQueue("T", 0), 0)
    state = partitions.get(KEY)
    assert state is not None
    client = ReportingClient(None)  # holds each delivery callback until polled, as librdkafka
    sink = RecordSink({}, factory=lambda _settings: client)  # type: ignore[arg-type,return-value]
    tracer = Tracer(_DiscardingSink(), Emitter("c", "ns")) if traced else None  # type: ignore[arg-type]
    sendback = SendBack(sink, settings.retry_policy(), "ns", now_ms=lambda: 0, tracer=tracer)
    settlement = Settlement(settings, sendback, partitions, None, lambda: 0.0)  # type: ignore[arg-type]
    batches = []
    for offset in range(SENDS):
        msg = MessageExt("T", b"x", f"m{offset}", 0, offset, 0, 0, 0, {"TAGS": "a"})
        state.pq.add(offset, 1)
        batch = ConsumeBatch(KEY, state.queue, state.pq, [msg])
        batch.status = ConsumeConcurrentlyStatus.RECONSUME_LATER
        batch.context = ConsumeConcurrentlyContext(state.queue)
        batches.append(batch)
    settlement.track(batches)
    before = _tracked()

    settlement.on_results(batches)
    assert len(client) == SENDS and settlement.pending_sendbacks == SENDS
    # per send-back: the producer's callback and settlement's own, traced one more (a
    # batch of one failed message has no round). The core's callbacks are out of the
    # collector's sight: nothing is left. Pure Python's (functools.partial) are each two
    # objects, the partial and its arguments; closures with cells, or a record kept with
    # its headers for the trace, would be several times that.
    per_send = 0 if CORE is not None else 6 if traced else 4
    assert _tracked() - before <= per_send * SENDS + SLACK

    sink.poll()
    settlement.on_results([])  # a round of the poll loop: the reports, then the settling
    assert settlement.pending_sendbacks == 0 and state.pq.count == 0
    assert _tracked() - before <= 0.05 * SENDS
