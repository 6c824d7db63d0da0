"""A send-back client that became unusable is replaced; a message whose send-back keeps
failing is listed as stuck (issue 7 item 7)."""

from __future__ import annotations

from confluent_kafka import KafkaError
from test_consumer_settlement import BUSY, Sink, _settle
from unit_fakes import ReportingClient

from rmqcompat.consumer.listener import ConsumeConcurrentlyContext, ConsumeConcurrentlyStatus
from rmqcompat.consumer.sendback import RecordSink
from rmqcompat.consumer.settlement import STUCK_AFTER_FAILED_SEND_BACKS
from rmqcompat.wire import OutgoingRecord

FENCED = KafkaError(KafkaError.PRODUCER_FENCED, "fenced", fatal=True)
RECORD = OutgoingRecord("t", b"v", None, [])


def test_a_fenced_client_is_replaced_and_the_next_send_uses_the_new_one():
    clients = [ReportingClient(FENCED), ReportingClient(None)]
    made = iter(clients)
    sink = RecordSink({}, factory=lambda _settings: next(made))
    outcomes: list[KafkaError | None] = []
    sink.produce(RECORD, outcomes.append)
    sink.produce(RECORD, outcomes.append)  # queued on the broken client too
    sink.poll()
    assert outcomes == [FENCED, FENCED] and sink.replacements == 1  # replaced once
    sink.produce(RECORD, outcomes.append)
    sink.poll()
    assert outcomes[-1] is None and clients[1].produced == 1


def test_a_passing_failure_keeps_the_client():
    busy = ReportingClient(KafkaError(KafkaError.REQUEST_TIMED_OUT, "timed out"))
    sink = RecordSink({}, factory=lambda _settings: busy)
    sink.produce(RECORD, lambda _err: None)
    sink.poll()
    assert sink.replacements == 0


def test_a_message_whose_send_back_keeps_failing_is_listed_as_stuck_until_it_succeeds():
    sink = Sink({"retry": BUSY, "dlq": None})
    settlement, state, pool, clock = _settle(sink)  # failure 1: consumed again locally
    for attempt in range(2, STUCK_AFTER_FAILED_SEND_BACKS + 1):
        assert not state.stuck_now(), f"stuck after {attempt - 1} failures"
        clock[0] += 5.0
        settlement.run_due(clock[0])
        settlement.on_results([_failed_again(pool)])
    [(msg_id, cause)] = state.stuck_now()
    assert msg_id == "m1" and f"failed {STUCK_AFTER_FAILED_SEND_BACKS} times" in cause
    sink.errors["retry"] = None  # the broker is back
    clock[0] += 5.0
    settlement.run_due(clock[0])
    settlement.on_results([_failed_again(pool)])
    assert 0 not in state.pq and not state.stuck_now()


def _failed_again(pool):
    """The last re-submitted batch, failed again by the listener."""
    batch = pool.submitted[-1]
    batch.status = ConsumeConcurrentlyStatus.RECONSUME_LATER
    batch.context = ConsumeConcurrentlyContext(batch.queue)
    return batch


def test_close_drops_what_is_queued_and_closes_the_current_and_the_replaced_client():
    fenced, fresh = ReportingClient(FENCED), ReportingClient(None)
    made = iter([fenced, fresh])
    sink = RecordSink({}, factory=lambda _settings: next(made))
    sink.produce(RECORD, lambda _err: None)
    sink.poll()  # the fence is reported: fenced is retired, fresh takes over
    sink.produce(RECORD, lambda _err: None)

    sink.close()

    assert fresh.purged == 1 and fresh.closed
    assert fenced.closed
