"""A retry record with an impossible ``RECONSUME_TIME`` cannot stop its partition (issue 7
item 5): before, a failed listener call on ``RECONSUME_TIME=-5`` asked for delay level -2,
the send-back raised on the poll thread and consuming stopped, again on every restart."""

from __future__ import annotations

from consumer_fixtures import consumer_env  # noqa: F401
from consumer_helpers import LATER, LEVELS, OK, Recorder
from waiting import wait_until

from rmqcompat import properties as props
from rmqcompat.topics.naming import retry_topic


def test_a_failed_retry_record_with_reconsume_time_minus_5_is_sent_back_and_flow_continues(env):
    retry = env.create_retry_topic()
    poison_props = {props.RETRY_TOPIC: env.topic, props.RECONSUME_TIME: "-5"}
    [poison] = env.produce([{"props": poison_props}], topic=retry)
    rec = Recorder(lambda msgs, ctx: LATER if msgs[0].msg_id == poison else OK)
    with env.consumer(rec) as consumer:
        wait_until(lambda: poison in rec.ids(), what="the poison delivery")
        later = env.produce([{}])
        wait_until(lambda: later[0] in rec.ids(), what="a message after the poison record")
        wait_until(lambda: env.offset(retry) == 1, what="the retry offset past the poison record")
        assert consumer.healthy()
    # read as 0 failures before: parked on level 3 like any first failure, counting 1
    assert [(d[1], d[2]) for d in rec.deliveries if d[0] == poison] == [(env.topic, 0)]
    parked = [h for h, _ in env.read_all(LEVELS.topic(3)) if h.get(props.UNIQ_KEY) == poison]
    assert [(h[props.RECONSUME_TIME], h[props.REAL_TOPIC]) for h in parked] == [
        ("1", retry_topic(env.group))
    ]
