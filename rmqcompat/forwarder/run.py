"""The drain's common case: a run of held records forwarded in one call (compiled where
the core is built).

:func:`forward_run` forwards the records at the head of a partition while each is in the
common case of the plan (:func:`~rmqcompat.forwarder.plan.plain_release` answers, the
record is due, and its real topic was accepted before by the
:class:`~rmqcompat.forwarder.plan.Planner`) and is not recalled. It stops, without taking
it, at the first record that is not, at the first whose produce raises, and after
``limit`` records. The drain then plans that record on its general path, which also
decides what a refused produce means, so a run decides nothing the general path would not
decide the same way: it only spares the Python around each record (the plan's objects,
the loop, the calls), which was a third of the forwarder's time per record.

The pure-Python reference of the core's ``forward_run`` (``tests/unit/test_core_parity.py``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Container, Mapping

from rmqcompat.clock import Clock
from rmqcompat.core import CORE
from rmqcompat.forwarder.plan import plain_release, record_append_ms
from rmqcompat.forwarder.schedule import lateness_s
from rmqcompat.parking import ANY_QUEUE
from rmqcompat.properties import UNIQ_KEY, Headers
from rmqcompat.trace.bulk import Forwarded
from rmqcompat.wire import KafkaRecord

#: A held record: the consumed record, its headers (read once), its size in bytes.
Held = tuple[KafkaRecord, Headers | None, int]
#: Records one run forwards at most: the drain checks for a stop between runs.
RUN_LIMIT = 500


def forward_run(
    held: deque[Held],
    accepted: Mapping[str, str],
    level_delay_ms: int,
    clock: Clock,
    recalled: Container[str | None],
    start: Callable[..., object],
    produce: Callable[..., None],
    late: list[float],
    traced: list[Forwarded] | None,
    trace_clock: Clock,
    limit: int,
) -> tuple[int, int]:
    """Forward records from the head of ``held`` (see the module); returns how many it took
    off and their size.

    For each: ``start(record, topic, value, key, headers, partition)`` makes its delivery
    callback, ``produce(topic, value, key, partition, callback, None, 0, headers)`` sends
    it (positionally, as confluent's ``produce`` lists them: ``partition`` -1 lets the
    key pick one, the callback goes as ``callback``, 0 is the default timestamp), then its
    lateness in seconds goes to ``late`` and, unless ``traced`` is None, its FORWARD
    event's fields (``trace_clock()`` first) to ``traced``. ``clock`` is read once per
    record, before its plan.
    """
    count = size = 0
    while held and count < limit:
        record, headers, record_size = held[0]
        now = clock()
        plain = plain_release(headers, record_append_ms(record), level_delay_ms, now)
        if plain is None:
            break
        due, properties, real_topic, real_qid, kept = plain
        topic = accepted.get(real_topic)
        if kept is None or topic is None:
            break  # not due, or a real topic the general path has not accepted yet
        if recalled and properties.get(UNIQ_KEY) in recalled:
            break
        value, key = record.value() or b"", record.key()
        partition = -1 if real_qid == ANY_QUEUE else real_qid
        callback = start(record, topic, value, key, kept, partition)
        try:
            produce(topic, value, key, partition, callback, None, 0, kept)
        except Exception:  # nothing was queued: the general path sends it again
            break
        late.append(lateness_s(due, now))
        if traced is not None:
            traced.append((trace_clock(), record, properties, due))
        held.popleft()
        count += 1
        size += record_size
    return count, size


#: What the drain calls: the core's where it is built, else the reference above.
active_forward_run = forward_run if CORE is None else CORE.forward_run
