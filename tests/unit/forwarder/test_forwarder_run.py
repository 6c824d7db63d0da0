"""A run of forwards (:mod:`rmqcompat.forwarder.run`) against the drain's general path:
every record a run takes is one the general path forwards exactly so, and where a run
stops the general path has something else to decide. (The core's run is held to this
reference in ``tests/unit/test_core_parity.py``.)"""

from __future__ import annotations

from collections import deque
from typing import Any

from confluent_kafka import TIMESTAMP_LOG_APPEND_TIME, Message
from hypothesis import given
from hypothesis import strategies as st

from rmqcompat import properties as props
from rmqcompat.forwarder.plan import Forward, Planner
from rmqcompat.forwarder.run import forward_run
from rmqcompat.topics.delay_levels import DelayLevels

NOW = 1_700_000_000_000
DELAY_MS = 1000
NS = "ns"

PROPERTIES = st.fixed_dictionaries(
    {
        props.DUE_TIME: st.integers(-3000, 3000).map(lambda d: str(NOW + d)),
        props.REAL_TOPIC: st.sampled_from(["Orders", "Bills", "bad name!", ""]),
    },
    optional={
        props.REAL_QID: st.sampled_from(["0", "2", "-1", "x"]),
        props.UNIQ_KEY: st.sampled_from(["id-1", "gone"]),
        props.TIMER_DELIVER_MS: st.just(str(NOW)),
        "U": st.just("u"),
    },
)
RECORDS = st.builds(
    lambda properties, appended, value: Message(
        topic="ns.rmq.delay.1s",
        partition=0,
        offset=7,
        value=value,
        key=b"k",
        headers=[(name, text.encode()) for name, text in properties.items()],
        timestamp=(TIMESTAMP_LOG_APPEND_TIME, appended),
    ),
    PROPERTIES,
    st.integers(-3000, 1000).map(lambda d: NOW + d),
    st.none() | st.just(b"v"),
)


@given(st.lists(RECORDS, max_size=6), st.sets(st.sampled_from(["Orders", "Bills"])))
def test_a_run_forwards_what_the_general_path_forwards_and_stops_where_it_decides(
    records: list[Message], accepted_topics: set[str]
) -> None:
    planner = Planner(DelayLevels.parse("1s 5s"), NS)
    for topic in accepted_topics:
        accepting = _record(topic)
        planner.plan_read(accepting, accepting.headers(), DELAY_MS, NOW)
    accepted = dict(planner.accepted)
    held = deque((record, record.headers(), 1) for record in records)
    produced: list[tuple[Any, ...]] = []

    def produce(topic: str, value: bytes, key: bytes | None, partition: int, *rest: Any) -> None:
        produced.append((topic, value, key, rest[-1], partition))  # headers last

    late: list[float] = []
    count, _ = forward_run(held, accepted, DELAY_MS, lambda: NOW, {"gone": 0},
                           lambda *_: None, produce, late, None, lambda: 0, 99)  # fmt: skip
    for record, sent, lateness in zip(records[:count], produced, late, strict=True):
        plan = planner.plan_read(record, record.headers(), DELAY_MS, NOW)
        assert isinstance(plan, Forward) and not plan.hop
        out = plan.record
        partition = -1 if out.partition is None else out.partition
        assert sent == (out.topic, out.value, out.key, out.headers, partition)
        assert lateness == max(0, NOW - plan.due_ms) / 1000
    if count < len(records):  # stopped at a record the general path decides on
        stop = records[count]
        plan = planner.plan_read(stop, stop.headers(), DELAY_MS, NOW)
        assert (
            not isinstance(plan, Forward)
            or plan.hop
            or props.TIMER_DELIVER_MS in plan.properties  # released with its timer headers
            or plan.properties.get(props.UNIQ_KEY) == "gone"
            or plan.record.topic not in accepted.values()
        )


def _record(real_topic: str) -> Message:
    """A due parked record that makes the planner accept ``real_topic``."""
    headers = [(props.REAL_TOPIC, real_topic.encode()), (props.DUE_TIME, str(NOW).encode())]
    return Message(topic="ns.rmq.delay.1s", headers=headers)
