"""The consumer's send-back client is fenced: it is replaced and the message moves on; a
send-back path that never recovers shows as stuck and unhealthy (issue 7 item 7).

The broker is real; only the first send-back client is a stand-in that reports a fatal
(fenced) error for every record, as a fenced idempotent producer does.
"""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import KafkaError, Producer
from consumer_fixtures import consumer_env  # noqa: F401
from consumer_helpers import LATER, Recorder
from unit_fakes import ReportingClient
from waiting import wait_until

from rmqcompat.consumer import sendback

FENCED = KafkaError(KafkaError.PRODUCER_FENCED, "fenced by a newer instance", fatal=True)


def _clients(fenced: int):
    """A client factory: ``fenced`` fenced stand-ins first, then real producers."""
    made = [0]

    def make(settings: dict[str, Any]) -> Any:
        made[0] += 1
        return ReportingClient(FENCED) if made[0] <= fenced else Producer(settings)

    return make


def _use_clients(monkeypatch: pytest.MonkeyPatch, fenced: int) -> None:
    """The sink's first client and its replacements from one :func:`_clients` factory."""
    make = _clients(fenced)
    monkeypatch.setattr(sendback, "new_idempotent_producer", make)
    monkeypatch.setattr(sendback, "Producer", make)


def test_a_fenced_send_back_client_is_replaced_and_the_offset_moves_on(env, monkeypatch):
    _use_clients(monkeypatch, fenced=1)
    ids = env.produce([{"body": b"fails"}])
    rec = Recorder(lambda msgs, ctx: LATER)
    with env.consumer(rec, send_back_failure_delay_s=0.1) as consumer:
        # sent back on the new client: the message leaves the partition
        wait_until(lambda: env.offset() == 1, what="the send-back on a new client")
        assert consumer.stuck_messages() == {}
    assert rec.ids()[:2] == ids * 2  # one local re-consume after the fenced attempt


def test_a_send_back_path_that_never_recovers_is_stuck_and_unhealthy(env, monkeypatch):
    _use_clients(monkeypatch, fenced=10**6)
    ids = env.produce([{"body": b"fails"}])
    with env.consumer(Recorder(lambda msgs, ctx: LATER), send_back_failure_delay_s=0.1) as c:
        wait_until(lambda: ids[0] in c.stuck_messages(), what="the stuck report")
        assert not c.healthy()
        reason = c.unhealthy_reason()
        assert reason is not None and "stuck" in reason and "PRODUCER_FENCED" in reason
        assert env.offset() in (-1001, 0)  # kept in flight: nothing lost
