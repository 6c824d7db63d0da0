"""A send-back that fails keeps the message in flight and re-consumes it locally (SEMANTICS 3).

The failure is real: the broker is frozen (SIGSTOP) while the send-back is produced, so
the delivery report times out. The broker stays frozen until the consumer says so:
librdkafka looks for timed-out messages once a second, and a send-back still unanswered at
the thaw would be stored after all (in a delay topic no forwarder serves here).
"""

from __future__ import annotations

import threading

import pytest
from consumer_fixtures import consumer_env  # noqa: F401
from consumer_helpers import LATER, OK, Recorder
from waiting import wait_until

SAID = "send-back failed; consuming again locally"


@pytest.mark.slow
def test_send_back_failure_keeps_message_in_flight_and_reconsumes_it_after_5s(
    env, dev_broker, caplog
):
    # a session that outlasts the freeze: the partition stays with this member
    env = env._replace(overrides={**env.overrides, "session.timeout.ms": 10_000})
    ids = env.produce([{"body": b"fails"}, {}, {}])
    go, second = threading.Event(), threading.Event()

    def behave(msgs, ctx):
        if msgs[0].body != b"fails":
            return OK
        if msgs[0].reconsume_times == 0:
            go.wait(30)
            return LATER
        second.wait(30)
        return OK

    rec = Recorder(behave)
    with env.consumer(rec, send_back_timeout_s=0.5):
        wait_until(lambda: len(rec.ids()) >= 3, what="first deliveries")
        dev_broker.freeze()
        try:
            go.set()  # the listener fails; its send-back meets a frozen broker
            wait_until(lambda: SAID in caplog.text, timeout=8, what="the send-back's failure")
        finally:
            dev_broker.thaw()
        wait_until(lambda: len(rec.ids()) >= 4, timeout=30, what="local re-consume")
        # in flight the whole time: the commit never passed offset 0
        assert env.offset() in (-1001, 0)
        second.set()
        wait_until(lambda: env.offset() == 3, what="commit after success")
    redelivery = rec.deliveries[3]
    # same record (offset 0, business topic), one more reconsume, no retry-topic hop
    assert (redelivery[0], redelivery[1], redelivery[2]) == (ids[0], env.topic, 1)
    assert redelivery[3].queue_offset == 0
