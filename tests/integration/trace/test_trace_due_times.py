"""The due time of a parked message is written once, by the send-back (at the listener's
failure) or the producer (at the send call), and every trace event about it records
exactly that value: the parked record's ``DUE_TIME``, the SEND_BACK or PUBLISH event, and
the FORWARD event of the forwarder that acted on it (issue 22)."""

from __future__ import annotations

import pytest
from consumer_fixtures import consumer_env  # noqa: F401
from consumer_helpers import LATER, OK, Recorder, trace_events
from waiting import wait_until

from rmqcompat import properties as props
from rmqcompat.forwarder import DelayForwarder
from rmqcompat.message import Message
from rmqcompat.producer import DefaultMQProducer
from rmqcompat.topics.delay_levels import DelayLevels

pytestmark = pytest.mark.integration

#: Levels of 1 s: the broker's append may lag the stamp by up to half of that (a loaded
#: machine) and the forwarder still acts on the stamp itself (``parking.park_lag_ms``).
TABLE = "1s 1s 1s"
LEVELS = DelayLevels.parse(TABLE)


def _by(events: list[dict], kind: str) -> dict[str, dict]:
    return {event["msg_id"]: event for event in events if event["event"] == kind}


def test_send_back_publish_parked_record_and_forward_carry_one_due_time(env) -> None:
    forwarder = DelayForwarder(
        bootstrap_servers=env.bootstrap,
        namespace=env.ns,
        message_delay_level=TABLE,
        kafka_config=env.overrides,
    )
    forwarder.start()
    try:
        retried = env.produce([{"body": b"fails once"}] * 3)
        with DefaultMQProducer(
            "P", env.bootstrap, namespace=env.ns, message_delay_level=TABLE,
            kafka_config=env.overrides,
        ) as producer:  # fmt: skip
            # the first send to a level learns its topic (an admin request): not measured
            producer.send(Message(env.topic, b"delayed", delay_time_level=2))
            delayed = producer.send(Message(env.topic, b"delayed", delay_time_level=2)).msg_id
        recorder = Recorder(
            lambda msgs, _ctx: (
                OK if msgs[0].reconsume_times or msgs[0].body == b"delayed" else LATER
            )
        )
        with env.consumer(recorder, message_delay_level=TABLE):
            wait_until(lambda: len(recorder.ids()) >= 8, what="3 retries and 2 delayed messages")
    finally:
        forwarder.shutdown()

    def enough(events: list[dict]) -> bool:
        return len(_by(events, "FORWARD")) >= 5 and len(_by(events, "SEND_BACK")) >= 3

    events = trace_events(env.bootstrap, env.ns, enough)
    send_backs, forwards = _by(events, "SEND_BACK"), _by(events, "FORWARD")
    published = _by(events, "PUBLISH")[delayed]
    retry_level_topic = env.read_all(LEVELS.topic(3))
    delay_level_topic = env.read_all(LEVELS.topic(2))
    written = {h[props.UNIQ_KEY]: int(h[props.DUE_TIME]) for h, _ in retry_level_topic}
    written.update({h[props.UNIQ_KEY]: int(h[props.DUE_TIME]) for h, _ in delay_level_topic})
    assert sorted(send_backs) == sorted(retried)
    for msg_id in retried:
        assert send_backs[msg_id]["due_ms"] == written[msg_id] == forwards[msg_id]["due_ms"]
        assert send_backs[msg_id]["target_topic"] == LEVELS.topic(3)
    assert published["due_ms"] == written[delayed] == forwards[delayed]["due_ms"]
