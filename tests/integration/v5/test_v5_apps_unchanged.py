"""Apps written against Apache RocketMQ's Python clients, run with their imports untouched
through the ``rocketmq`` shim; only the endpoint is a Kafka bootstrap server. The scripts
follow the usage of upstream's examples (rocketmq-clients ``python/example/`` for 5.x,
rocketmq-client-python ``samples/`` for 4.x), written in our own words."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from v5_helpers import create_topic

SHIM = Path(__file__).resolve().parents[3] / "rocketmq"

APP_5X = """
import sys
from rocketmq import (ClientConfiguration, Credentials, FilterExpression, Message, Producer,
                      SimpleConsumer)

endpoints, namespace, topic = sys.argv[1:4]
config = ClientConfiguration(endpoints, Credentials(), namespace)
producer = Producer(config, (topic,))
producer.startup()
msg = Message()
msg.topic = topic
msg.body = "hello, rocketmq.".encode("utf-8")
msg.tag = "rocketmq-send-message"
msg.keys = "send_sync"
msg.add_property("send", "sync")
receipt = producer.send(msg)
producer.shutdown()

consumer = SimpleConsumer(config, "consumer_group", await_duration=1)
consumer.startup()
consumer.subscribe(topic, FilterExpression("rocketmq-send-message"))
got = []
while not got:
    got = consumer.receive(32, 15)
for message in got:
    consumer.ack(message)
consumer.shutdown()
print(got[0].message_id == receipt.message_id, got[0].body.decode(), got[0].properties["send"])
"""

APP_4X = """
import sys
from rocketmq.client import Message, Producer

endpoints, namespace, topic = sys.argv[1:4]
producer = Producer("PID-XXX")
producer.set_name_server_address(endpoints)
producer.set_namespace(namespace)
producer.start()
msg = Message(topic)
msg.set_keys("XXX")
msg.set_tags("XXX")
msg.set_property("property", "test")
msg.set_body("message body")
ret = producer.send_sync(msg)
producer.shutdown()
print("send message status: " + str(ret.status))
"""


def _run_app(source: str, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(SHIM)}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(source), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_5x_app_sends_receives_and_acks_with_its_imports_untouched(kafka_bootstrap, namespace):
    create_topic(kafka_bootstrap, namespace, "normal-topic")
    out = _run_app(APP_5X, kafka_bootstrap, namespace, "normal-topic")
    assert out == "True hello, rocketmq. sync"


def test_a_4x_app_sends_with_its_imports_untouched(kafka_bootstrap, namespace):
    create_topic(kafka_bootstrap, namespace, "TopicTest")
    out = _run_app(APP_4X, kafka_bootstrap, namespace, "TopicTest")
    assert out == "send message status: 0"
