"""The plain lane and the delivery reports: the producer's two hot paths, each run as the
Python class and as the core's, must do exactly what the general path does."""

from __future__ import annotations

import gc
import logging
import weakref
from collections import deque
from collections.abc import Callable
from concurrent.futures import InvalidStateError
from typing import Any
from unittest import mock

import pytest
from compiled_core import compiled_core
from confluent_kafka import KafkaError, KafkaException
from test_producer_hot_path import RecordingClient

from rmqcompat import properties as props
from rmqcompat.clock import epoch_ms
from rmqcompat.message import Message
from rmqcompat.message_id import MessageIds
from rmqcompat.producer import DefaultMQProducer
from rmqcompat.producer import pending as pending_module
from rmqcompat.producer.deliveries import DeliveryReports
from rmqcompat.producer.failures import Backoff
from rmqcompat.producer.pending import PendingSend
from rmqcompat.producer.pipeline import Pipeline
from rmqcompat.producer.plain_lane import PlainLane
from rmqcompat.producer.records import plain_headers
from rmqcompat.producer.spool import SpoolEntry
from rmqcompat.wire import OutgoingRecord

PREFIX = "0123456789ABCDEF"


@pytest.fixture(params=["PlainLane", "compiled PlainLane"])
def lane_kind(request: pytest.FixtureRequest) -> type[PlainLane]:
    if request.param == "PlainLane":
        return PlainLane
    return compiled_core().PlainLane  # type: ignore[no-any-return]


@pytest.fixture(params=["MessageIds", "compiled MessageIds"])
def ids_kind(request: pytest.FixtureRequest) -> type[MessageIds]:
    if request.param == "MessageIds":
        return MessageIds
    return compiled_core().MessageIds  # type: ignore[no-any-return]


class _Lane:
    """A lane with its collaborators, each one a recorder."""

    def __init__(
        self,
        kind: type[PlainLane],
        ids_kind: type[MessageIds] = MessageIds,
        clock: Callable[[], int] = lambda: 42,
        refusal: BaseException | None = None,
    ) -> None:
        self.ready = {"Orders": "ns.Orders"}
        self.in_flight: set[PendingSend] = set()
        self.report, self.refused = mock.Mock(), mock.Mock()
        self.ids = ids_kind(PREFIX, 7)
        self.client = RecordingClient(refusal)
        self.lane = kind(
            self.ready, 100, self.ids, clock, self.in_flight, self.report, self.refused
        )
        self.lane.producer = self.client


def test_a_plain_send_to_a_ready_topic_is_started_as_the_general_path_starts_it(
    lane_kind: type[PlainLane], ids_kind: type[MessageIds]
) -> None:
    setup = _Lane(lane_kind, ids_kind)
    callback = mock.Mock()
    msg = Message("Orders", b"body", tags="t", keys=["a", "b"], flag=3)
    pending = setup.lane.send(msg, 3, callback)
    assert pending is not None
    msg_id = MessageIds(PREFIX, 7).next_id()
    headers = plain_headers(msg, msg_id, 42)
    assert headers is not None and headers[props.BORN_TIMESTAMP] == b"42"
    assert (pending.topic, pending.value, pending.key, pending.headers) == (
        "ns.Orders",
        b"body",
        None,
        headers,
    )
    assert (pending.msg_id, pending.logical_topic, pending.message) == (msg_id, "Orders", msg)
    assert (pending.max_attempts, pending.deadline, pending.partition) == (3, None, None)
    assert (pending.attempts, pending.producer, pending.on_report) == (
        1,
        setup.client,
        setup.report,
    )
    assert setup.in_flight == {pending}
    assert setup.client.produced == [("ns.Orders", b"body", None, -1, pending, None, 0, headers)]
    pending.set_stored(0, 5)
    callback.assert_called_once()  # the callback is the send's own
    setup.refused.assert_not_called()


def test_the_wall_clock_stamps_the_born_time(lane_kind: type[PlainLane]) -> None:
    setup = _Lane(lane_kind, clock=epoch_ms)
    before = epoch_ms()
    pending = setup.lane.send(Message("Orders", b"x"), 1, None)
    assert pending is not None and isinstance(pending.headers, dict)
    assert before <= int(pending.headers[props.BORN_TIMESTAMP]) <= epoch_ms()


@pytest.mark.parametrize(
    "change",
    [
        {"topic": "Unchecked"},
        {"body": "text"},
        {"body": b"x" * 101},
        {"properties": {"u": "1"}},
        {"delay_time_level": 2},
        {"deliver_time_ms": 10**13},
    ],
    ids=str,
)
def test_any_other_send_is_left_to_the_general_path_untouched(
    lane_kind: type[PlainLane], change: dict[str, Any]
) -> None:
    setup = _Lane(lane_kind)
    msg = Message("Orders", b"x")
    for name, value in change.items():
        object.__setattr__(msg, name, value)
    assert setup.lane.send(msg, 3, None) is None
    assert (setup.in_flight, setup.client.produced) == (set(), [])


def test_no_send_starts_before_the_pipeline_gave_its_client(lane_kind: type[PlainLane]) -> None:
    setup = _Lane(lane_kind)
    setup.lane.producer = None
    assert setup.lane.producer is None
    assert setup.lane.send(Message("Orders", b"x"), 3, None) is None
    assert setup.in_flight == set()


@pytest.mark.parametrize(
    "refusal", [BufferError("queue full"), KafkaException(KafkaError(KafkaError._MSG_TIMED_OUT))]
)
def test_a_refused_attempt_goes_to_the_pipeline_and_the_send_is_still_returned(
    lane_kind: type[PlainLane], refusal: BaseException
) -> None:
    setup = _Lane(lane_kind, refusal=refusal)
    pending = setup.lane.send(Message("Orders", b"x"), 3, None)
    assert pending is not None and setup.in_flight == {pending}
    setup.refused.assert_called_once_with(setup.client, pending, refusal)


def test_any_other_error_of_produce_is_raised(lane_kind: type[PlainLane]) -> None:
    setup = _Lane(lane_kind, refusal=TypeError("odd client"))
    with pytest.raises(TypeError, match="odd client"):
        setup.lane.send(Message("Orders", b"x"), 3, None)
    setup.refused.assert_not_called()


# --- delivery reports -------------------------------------------------------------------


class _Stored:
    """librdkafka's report message of a stored record."""

    def partition(self) -> int:
        return 2

    def offset(self) -> int:
        return 17


@pytest.fixture(params=["DeliveryReports", "compiled DeliveryReports"])
def reports_kind(request: pytest.FixtureRequest) -> tuple[type[DeliveryReports], type[Any]]:
    """Each handler, with the kind of send it handles."""
    if request.param == "DeliveryReports":
        return DeliveryReports, PendingSend
    core = compiled_core()
    return core.DeliveryReports, core.PendingSend


class _Reports:
    def __init__(
        self,
        kinds: tuple[type[DeliveryReports], type[Any]],
        traced: bool = True,
        trace_run: int = 100,
    ) -> None:
        reports_kind, self.send_kind = kinds
        self.failed, self.unspool = mock.Mock(), mock.Mock()
        self.none_in_flight, self.trace_noted = mock.Mock(), mock.Mock()
        self.in_flight: set[Any] = set()
        self.acknowledged: deque[Any] = deque()
        self.reports = reports_kind(
            self.failed,
            self.unspool,
            self.in_flight,
            self.none_in_flight,
            self.acknowledged if traced else None,
            lambda: 99,
            trace_run,
            self.trace_noted,
        )

    def send(self, headers: Any = None, **kw: Any) -> PendingSend:
        headers = {props.UNIQ_KEY: b"ID1"} if headers is None else headers
        message = Message("T", b"body")
        pending: PendingSend = self.send_kind(
            "ns.T", b"body", None, headers, "ID1", "T", message, 3, **kw
        )
        pending.start_attempt(RecordingClient(), self.reports)
        self.in_flight.add(pending)
        return pending


def test_a_stored_send_completes_lets_go_of_its_record_is_noted_and_leaves(
    reports_kind: tuple[type[DeliveryReports], type[Any]],
) -> None:
    setup = _Reports(reports_kind)
    pending, other = setup.send(), setup.send()
    message = pending.message
    pending(None, _Stored())  # the report reaches the handler through the send
    result = pending.result(timeout=0)
    assert (result.message_queue.queue_id, result.queue_offset) == (2, 17)
    assert (pending.value, pending.headers, pending.message, pending.producer) == (None,) * 4
    assert list(setup.acknowledged) == [(99, message, "ID1", "ns.T", None, ())]
    assert setup.in_flight == {other}
    setup.none_in_flight.assert_not_called()
    other(None, _Stored())
    setup.none_in_flight.assert_called_once_with()
    setup.failed.assert_not_called()
    setup.unspool.assert_not_called()


def test_a_stored_send_with_built_headers_is_noted_with_them(
    reports_kind: tuple[type[DeliveryReports], type[Any]],
) -> None:
    setup = _Reports(reports_kind)
    headers = [(props.UNIQ_KEY, b"ID1"), ("DELAY", b"3")]
    setup.send(headers)(None, _Stored())
    assert setup.acknowledged[0][5] == headers


def test_a_full_run_of_noted_sends_goes_to_the_trace(
    reports_kind: tuple[type[DeliveryReports], type[Any]],
) -> None:
    setup = _Reports(reports_kind, trace_run=2)
    setup.send()(None, _Stored())
    setup.trace_noted.assert_not_called()
    setup.send()(None, _Stored())
    setup.trace_noted.assert_called_once_with()


def test_nothing_is_noted_untraced(reports_kind: tuple[type[DeliveryReports], type[Any]]) -> None:
    setup = _Reports(reports_kind, traced=False)
    pending = setup.send()
    pending(None, _Stored())
    assert pending.done() and not setup.acknowledged


def test_a_failed_attempt_goes_to_the_pipeline_with_its_client(
    reports_kind: tuple[type[DeliveryReports], type[Any]],
) -> None:
    setup = _Reports(reports_kind)
    pending = setup.send()
    error = KafkaError(KafkaError._MSG_TIMED_OUT)
    pending(error, None)
    setup.failed.assert_called_once_with(pending, error, pending.producer)
    assert not pending.done() and pending.value == b"body" and setup.in_flight == {pending}


def test_a_stored_resend_deletes_its_spool_entry_first(
    reports_kind: tuple[type[DeliveryReports], type[Any]],
) -> None:
    setup = _Reports(reports_kind)
    entry = SpoolEntry("ID1", OutgoingRecord("ns.T", b"body", None, []), 1, "_MSG_TIMED_OUT", 3)
    pending = setup.send(spool_entry=entry)
    pending(None, _Stored())
    setup.unspool.assert_called_once_with(entry)
    assert pending.done() and setup.in_flight == set()


def test_a_send_stored_after_it_timed_out_keeps_its_timeout(
    reports_kind: tuple[type[DeliveryReports], type[Any]], caplog: pytest.LogCaptureFixture
) -> None:
    setup = _Reports(reports_kind)
    pending = setup.send()
    timeout = TimeoutError("no report")
    pending.set_exception(timeout)
    with caplog.at_level(logging.INFO, "rmqcompat.producer.deliveries"):
        pending(None, _Stored())
    assert pending.exception(timeout=0) is timeout
    assert "message ID1 was delivered after its send timed out" in caplog.text
    assert not setup.acknowledged and setup.in_flight == {pending}  # settled by the timeout
    with pytest.raises(InvalidStateError):
        pending.set_stored(0, 1)


def test_the_compiled_handler_refuses_a_send_it_does_not_know() -> None:
    core = compiled_core()
    reports = _Reports((core.DeliveryReports, pending_module.PendingSend)).reports
    with pytest.raises(TypeError):
        reports(pending_module.PendingSend("t", b"", None, {}, "I", "T", None, 1), None, None)  # type: ignore[arg-type]


def test_a_producer_that_is_gone_takes_its_lane_and_handler_with_it() -> None:
    # The lane and the handler hold the pipeline's bound methods, and the pipeline holds
    # them: a cycle the collector must see through (the core's classes traverse it).
    producer = DefaultMQProducer("PG", "127.0.0.1:1", connect_on_start=False)
    gone = weakref.ref(producer._pipeline)
    del producer
    gc.collect()
    assert gone() is None


def test_the_lane_sends_on_the_client_the_pipeline_has_now() -> None:
    # No broker needed: creating a librdkafka client does no I/O.
    pipeline = Pipeline(
        {"bootstrap.servers": "127.0.0.1:1"},
        queue_wait_s=1.0,
        backoff=Backoff(),
        spool=None,
        clock_ms=epoch_ms,
    )
    lane = pipeline.plain_lane({}, 100, MessageIds(PREFIX), epoch_ms)
    assert lane.producer is None  # not started: the lane starts nothing
    pipeline.start()
    try:
        first = pipeline.producer
        assert lane.producer is first
        pipeline._replace(first)  # what an unusable client's failure does
        assert pipeline.producer is not first
        assert lane.producer is pipeline.producer
    finally:
        pipeline.close()
