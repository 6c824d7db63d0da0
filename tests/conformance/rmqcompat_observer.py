"""What an application observes on rmqcompat, recorded as ``Driver.java`` records it on
RocketMQ: deliveries and transaction calls as they happen (:class:`Observer`), dead
letters and copies at the transaction check maximum read after the run."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from confluent_kafka.admin import AdminClient
from consumer_helpers import read_records
from driver5 import Recording
from scenario import TIMEOUT_MS, Reply, Scenario

from rmqcompat import ClientConfig
from rmqcompat import properties as props
from rmqcompat.dlq import read_dead_letters
from rmqcompat.dlq.errors import UnknownGroupError
from rmqcompat.topics.naming import to_kafka_topic

#: Where RocketMQ keeps a copy of a half message discarded at the check maximum.
CHECK_MAX_TOPIC = "TRANS_CHECK_MAX_TIME_TOPIC"


@dataclass(frozen=True)
class KafkaSide:
    """Where rmqcompat runs: the broker, the test's client overrides and namespace."""

    bootstrap: str
    overrides: dict[str, Any]
    namespace: str


class Observer(Recording):
    """Records deliveries, dead letters and transaction calls as the driver does, and
    answers each batch from the scenario."""

    def __init__(self, scenario: Scenario) -> None:
        super().__init__(scenario.quiet_ms, scenario.first_delivery_grace_ms, TIMEOUT_MS)
        self.scenario = scenario

    def deliver(self, msgs: list[Any]) -> Reply:
        now = now_ms()
        with self._lock:
            batch = len(self.raw["deliveries"])
            reply: Reply | None = None
            for pos, msg in enumerate(msgs):
                attempt = self.next_attempt(msg.keys)
                reply = reply or self.scenario.reply(msg.keys, attempt)
                seen = observe(msg) | {"ms": now, "attempt": attempt, "batch": batch, "pos": pos}
                seen["reply"] = {k: v for k, v in reply.__dict__.items() if v is not None}
                self.raw["deliveries"].append(seen)
            self.last_event = time.monotonic()
        assert reply is not None
        return reply


def observe(msg: Any) -> dict[str, Any]:
    return {
        "key": msg.keys,
        "topic": msg.topic,
        "reconsume_times": msg.reconsume_times,
        "msg_id": msg.msg_id,
        "body": msg.body.decode("utf-8"),
        "properties": dict(msg.properties),
    }


def read_dead_letters_into(side: KafkaSide, group: str, observer: Observer) -> None:
    config = ClientConfig(side.bootstrap, side.namespace, kafka_config=side.overrides)
    try:
        for letter in read_dead_letters(config, group):
            observer.event(
                "dlq",
                {
                    "key": letter.keys[0] if letter.keys else None,
                    "topic": letter.dlq_topic,
                    "reconsume_times": letter.reconsume_times,
                    "msg_id": letter.msg_id,
                    "body": letter.body.decode("utf-8"),
                    "properties": letter.properties,
                },
            )
    except UnknownGroupError:
        pass  # no dead letter at all: the DLQ topic was never created


def read_check_max_copies_into(side: KafkaSide, topic: str, observer: Observer) -> None:
    """Copies of halves discarded at the check maximum, if rmqcompat keeps any: RocketMQ
    keeps them in ``TRANS_CHECK_MAX_TIME_TOPIC`` (issue 23: not yet here)."""
    physical = to_kafka_topic(CHECK_MAX_TOPIC, side.namespace)
    admin = AdminClient({"bootstrap.servers": side.bootstrap})
    if physical not in admin.list_topics(timeout=10).topics:
        return
    for record in read_records(side.bootstrap, CHECK_MAX_TOPIC, side.namespace):
        properties = props.from_headers(record.headers())
        if properties.get(props.REAL_TOPIC, topic) == topic:
            observer.event("check_max", {"key": properties.get(props.KEYS)})


def now_ms() -> int:
    return time.time_ns() // 1_000_000
