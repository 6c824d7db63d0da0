"""Health follows broker contact: a frozen broker makes the push consumer and the
forwarder unhealthy (``/health`` 503 with the reason) after ``broker_contact_timeout_s``,
and healthy again once it answers (issue 7 item 8).

Uses its own dev broker: freezing the session's would stall every test beside this one.
"""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest
from waiting import wait_until

from rmqcompat.consumer.listener import ConsumeConcurrentlyStatus
from rmqcompat.consumer.push_consumer import DefaultMQPushConsumer
from rmqcompat.forwarder import DelayForwarder
from rmqcompat.topics.provision import ensure_topics
from rmqcompat.topics.spec import TopicSpec

CONTACT_TIMEOUT_S = 2.0
WAIT_S = 60.0


def _health(port: int) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


@pytest.mark.slow
def test_a_frozen_broker_makes_consumer_and_forwarder_unhealthy_until_it_returns(
    own_dev_broker, client_overrides, namespace, unique_name
):
    bootstrap = own_dev_broker.bootstrap_servers
    topic = unique_name("Health")
    ensure_topics({"bootstrap.servers": bootstrap}, {topic: TopicSpec(1)}, namespace)
    consumer = DefaultMQPushConsumer(
        unique_name("g"),
        bootstrap,
        namespace=namespace,
        kafka_config=client_overrides,
        broker_contact_timeout_s=CONTACT_TIMEOUT_S,
    )
    consumer.subscribe(topic)
    consumer.register_message_listener(
        lambda _msgs, _ctx: ConsumeConcurrentlyStatus.CONSUME_SUCCESS
    )
    forwarder = DelayForwarder(
        bootstrap,
        namespace=namespace,
        kafka_config=client_overrides,
        metrics_port=0,
        broker_contact_timeout_s=CONTACT_TIMEOUT_S,
    )
    with consumer, forwarder:
        wait_until(lambda: consumer.healthy() and forwarder.healthy(), WAIT_S, "healthy")
        port = forwarder.metrics_port
        assert port is not None and _health(port)[0] == 200
        own_dev_broker.freeze()
        try:
            wait_until(lambda: not consumer.healthy(), WAIT_S, "the consumer to notice")
            wait_until(lambda: not forwarder.healthy(), WAIT_S, "the forwarder to notice")
            assert "no response from any broker" in (consumer.unhealthy_reason() or "")
            status, body = _health(port)
            assert status == 503 and "no response from any broker" in body
        finally:
            own_dev_broker.thaw()
        wait_until(lambda: consumer.healthy() and forwarder.healthy(), WAIT_S, "recovery")
        assert _health(port)[0] == 200
