"""Trace events built from what the data path has at hand (records, routing decisions).

Each function is called where the SDK decides what it names (``consumed``: concurrent
and orderly settlement; ``quarantined``: the consumer's intake, the forwarder's plan and
its delivery reports), only when ``tracer.enabled``; none raises for a malformed record
(a bad header yields a partial event, never an exception into the data path).

The hot paths' events (``published``, ``consumed``, ``settled_back_run``,
``forwarded``, ``replayed``) are not built here: the call takes the time and hands its
values to the sink with one append (:meth:`~rmqcompat.trace.sink.TraceSink.defer`); they
are encoded in bulk (:mod:`rmqcompat.trace.bulk`), on the sink's thread or, see
:data:`ENCODE_AT_ONCE`, at once.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from rmqcompat import properties as props
from rmqcompat.core import CORE
from rmqcompat.errors import MalformedHeaderError
from rmqcompat.message import MessageExt
from rmqcompat.retry import Destination
from rmqcompat.trace import bulk
from rmqcompat.trace.events import ConsumeStatus
from rmqcompat.trace.sink import ENCODING_ERRORS, Write
from rmqcompat.trace.tracer import Tracer
from rmqcompat.wire import KafkaRecord, decode_properties

if TYPE_CHECKING:
    from rmqcompat._core import ConsumeEvents


def _properties(headers: list[tuple[str, bytes | None]] | None) -> dict[str, str]:
    try:
        return decode_properties(headers)
    except MalformedHeaderError:
        return {}


def published(tracer: Tracer, acknowledged: Sequence[bulk.Acknowledged]) -> None:
    """The broker acknowledged these sends, each ``(at_ms, message, msg_id,
    physical_topic, born_ms, headers)``: ``message`` sent as ``msg_id`` to
    ``physical_topic`` with ``headers`` and acknowledged at ``at_ms``. A delayed message
    records when it is due as the producer wrote it: its delivery time, or the
    ``DUE_TIME`` of the level it was parked on. One append for all of them."""
    if acknowledged:
        _hand_over(tracer, bulk.published, (tracer.events.who, acknowledged), len(acknowledged))


def failed_call(
    msgs: Sequence[MessageExt],
    failed: Collection[int],
    duration_ms: int,
    timed_out: bool = False,
    raised: bool = False,
) -> bulk.Call:
    """A listener call on ``msgs`` that ended with the ``failed`` indexes RECONSUME_LATER
    (or TIME_OUT when the call outlasted the consume timeout, EXCEPTION when the listener
    raised), the others SUCCESS, as :func:`consumed_calls` takes it."""
    late: ConsumeStatus = "TIME_OUT" if timed_out else "EXCEPTION" if raised else "RECONSUME_LATER"
    # a failed message's count goes up if its send-back fails: the events keep this one
    counts = [msg.reconsume_times for msg in msgs] if failed else None
    return msgs, failed, duration_ms, late, counts


def consumed(
    tracer: Tracer,
    group: str,
    msgs: Sequence[MessageExt],
    failed: Collection[int],
    duration_ms: int,
    timed_out: bool = False,
    raised: bool = False,
) -> None:
    """One listener call on ``msgs`` ended (see :func:`failed_call`)."""
    consumed_calls(tracer, group, [failed_call(msgs, failed, duration_ms, timed_out, raised)])


def consumed_calls(tracer: Tracer, group: str, calls: Sequence[bulk.Call]) -> None:
    """These listener calls ended (each :func:`failed_call`): their CONSUME events, with
    one append for all of them."""
    events = tracer.events
    count = sum(len(call[0]) for call in calls)
    _hand_over(tracer, bulk.consumed_calls, (events.who, events.clock(), group, calls), count)


def consumed_ok(
    tracer: Tracer, group: str, calls: Sequence[tuple[Sequence[MessageExt], int]]
) -> None:
    """Listener calls on these messages succeeded whole, each ``(msgs, duration_ms)``:
    their CONSUME events (SUCCESS), with one append for all of them."""
    events = tracer.events
    count = sum(len(msgs) for msgs, _ in calls)
    _hand_over(tracer, bulk.consumed_ok, (events.who, events.clock(), group, calls), count)


def kept_consume_events(tracer: Tracer, group: str) -> ConsumeEvents | None:
    """Where the core's settlement writes the CONSUME events (SUCCESS) of the calls that
    succeeded whole, now: noted from the fields the direct fetch kept where it kept them,
    else encoded from the message (``native/src/received.rs``). None on the pure path,
    whose settlement hands the calls to :func:`consumed_ok`."""
    if CORE is None:
        return None
    events = tracer.events
    head = bulk.consume_head(events.who, events.clock(), group)
    kept: ConsumeEvents = CORE.ConsumeEvents(head, bulk.SUCCESS)
    return kept


def consumed_kept(tracer: Tracer, kept: ConsumeEvents) -> None:
    """The events settlement wrote to ``kept``: to the sink, with one append."""
    count = len(kept)
    if count:
        tracer.sink.defer(_as_encoded, (kept.take(),), count)


#: With the compiled core CONSUME, SEND_BACK and PUBLISH events are encoded at once, on
#: the calling thread: that (0.2-0.3 us an event) costs less than keeping the messages
#: alive until the trace thread encodes them (consume at batch 32: 0.7 against 1.3 us of
#: CPU a message, 3 runs each, 2026-11-26; a produce burst kept about 40,000 sent messages
#: alive for the collector to walk, 2026-11-27). In pure Python (1.4-3.7 us an event) the
#: trace thread encodes them.
ENCODE_AT_ONCE = CORE is not None


def _hand_over(tracer: Tracer, write: Write, args: tuple[Any, ...], count: int) -> None:
    """``write(*args)``'s ``count`` events to the sink: encoded now where
    :data:`ENCODE_AT_ONCE`, else on the sink's thread; values that cannot be encoded go
    to the sink as they are, which drops, counts and logs them."""
    if ENCODE_AT_ONCE:
        try:
            encoded = write(*args)
        except ENCODING_ERRORS:
            pass
        else:
            tracer.sink.defer(_as_encoded, (encoded,), count)
            return
    tracer.sink.defer(write, args, count)


def _as_encoded(events: Sequence[bytes]) -> Sequence[bytes]:
    return events


def dead_lettered(
    tracer: Tracer, msg: MessageExt, reconsume_times: int, group: str, dest: Destination
) -> None:
    """The broker stored the send-back of ``msg`` (whose delivery with the stored count
    ``reconsume_times`` failed) in the DLQ ``dest``: a DEAD_LETTER event."""
    event = tracer.events.dead_letter(msg, group, dest.real_topic, "routed to the DLQ")
    event["reconsume_times"] = reconsume_times
    tracer.emit(event)


def settled_back_run(tracer: Tracer, group: str, sends: Sequence[bulk.SentBack]) -> None:
    """The SEND_BACK events of these stored send-backs (each ends with where its record
    parked, as written: :data:`rmqcompat.parking.ParkedAt`), with one append for all of
    them.

    SEND_BACK events are encoded in bulk (:func:`rmqcompat.trace.bulk.sent_back`, see
    :data:`ENCODE_AT_ONCE`): built as a whole event and encoded by the schema's writer
    one took 7.2 us against 3.7 us in bulk."""
    _hand_over(tracer, bulk.sent_back, (tracer.events.who, group, sends), len(sends))


def forwarded(tracer: Tracer, records: Sequence[bulk.Forwarded]) -> None:
    """The forwarder produced these parked records, each ``(at_ms, source, properties,
    due_ms)`` (``properties``: its parsed headers), to their real topics: one append for
    all of them."""
    if records:
        tracer.sink.defer(bulk.forwarded, (tracer.events.who, records), len(records))


def quarantined(tracer: Tracer, source: KafkaRecord, reason: str, group: str | None = None) -> None:
    """``source`` was set aside in the quarantine topic."""
    msg_id = _properties(source.headers()).get(props.UNIQ_KEY, "")
    tracer.emit(
        tracer.events.quarantine(
            source.topic() or "",
            source.partition() or 0,
            source.offset() or 0,
            reason,
            msg_id=msg_id,
            group=group,
        )
    )


def replayed(
    tracer: Tracer,
    group: str,
    letters: Iterable[bulk.Replayed],
    count: int,
    command: str,
    places: bulk.Places,
) -> None:
    """``count`` dead letters of ``group`` were sent again (committed): each holding its
    msg id, original topic, the topic it was replayed to and its origin msg id at
    ``places``, read on the sink's thread (what ``letters`` holds must not change);
    ``command`` is the operator's command line."""
    events = tracer.events
    args = (events.who, events.clock(), group, letters, command, places)
    tracer.sink.defer(bulk.replayed, args, count)
