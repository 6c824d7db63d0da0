"""Closing a group member: its rebalance callbacks run while the client still answers."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator

import pytest
from confluent_kafka import Consumer, KafkaException, TopicPartition
from consumer_helpers import create_topic
from waiting import wait_until

from rmqcompat.closing import close_group_member

pytestmark = pytest.mark.slow

#: long enough for the unpolled member's heartbeat to learn of the rebalance
HEARTBEATS_S = 2.0
#: settings the consumer protocol refuses (the broker assigns, and times the session)
_CLASSIC_ONLY = ("partition.assignment.strategy", "session.timeout.ms", "heartbeat.interval.ms")


@pytest.fixture
def group_config(
    kafka_bootstrap: str, unique_name: Callable[[str], str], client_overrides: dict[str, str | int]
) -> dict[str, str | int]:
    """Consumers of one new group with the eager ``range`` assignor (librdkafka's
    default, on the classic protocol)."""
    return {
        **client_overrides,
        "bootstrap.servers": kafka_bootstrap,
        "group.id": unique_name("close"),
        "partition.assignment.strategy": "range",
    }


@pytest.fixture
def member(group_config: dict[str, str | int]) -> Iterator[Callable[[], Consumer]]:
    """Factory of members of ``group_config``'s group, closed at the end in case the test
    did not."""
    made: list[Consumer] = []

    def make() -> Consumer:
        consumer = Consumer(group_config)
        made.append(consumer)
        return consumer

    yield make
    for consumer in made:
        try:
            consumer.close()
        except RuntimeError:  # closed by the test
            pass


def _assigned(consumer: Consumer) -> list[tuple[str, int]]:
    return sorted((tp.topic, tp.partition) for tp in consumer.assignment())


def test_a_rebalance_nobody_polled_is_served_before_the_client_closes(
    member: Callable[[], Consumer],
    group_config: dict[str, str | int],
    kafka_bootstrap: str,
    namespace: str,
) -> None:
    """A member joins while the first one is not polled: the first one's revoke is queued.
    ``Consumer.close()`` would serve it only after the group terminated, where the
    callback's ``unassign`` can wait for ever (librdkafka issue 4884) and any call to the
    client fails with _DESTROY; :func:`close_group_member` serves it first."""
    topic = create_topic(kafka_bootstrap, "closing", namespace, partitions=2)
    first = member()
    answers: list[str] = []

    def on_revoke(consumer: Consumer, tps: list[TopicPartition]) -> None:
        time.sleep(1.0)  # past the moment close() lets the group terminate
        try:
            answers.append(f"assignment {_assigned(consumer)}")
        except KafkaException as exc:
            answers.append(f"failed: {exc}")
        consumer.unassign()

    first.subscribe([topic], on_revoke=on_revoke)
    wait_until(lambda: first.poll(0.1) is None and len(first.assignment()) == 2, what="assigned")
    second = member()
    second.subscribe([topic])
    deadline = time.monotonic() + HEARTBEATS_S
    while time.monotonic() < deadline:  # the first member is not polled meanwhile
        second.poll(0.1)

    close_group_member(first, group_config)

    assert answers == [f"assignment {[(topic, 0), (topic, 1)]}"]
    wait_until(
        lambda: second.poll(0.1) is None and _assigned(second) == [(topic, 0), (topic, 1)],
        what="both partitions handed over",
    )


def test_a_failing_revoke_callback_is_logged_and_the_client_closes_anyway(
    member: Callable[[], Consumer],
    group_config: dict[str, str | int],
    kafka_bootstrap: str,
    namespace: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    topic = create_topic(kafka_bootstrap, "closing", namespace)
    only = member()

    def on_revoke(consumer: Consumer, tps: list[TopicPartition]) -> None:
        raise ValueError("the listener's bug")

    only.subscribe([topic], on_revoke=on_revoke)
    wait_until(lambda: only.poll(0.1) is None and only.assignment(), what="assigned")

    with caplog.at_level(logging.ERROR, logger="rmqcompat.closing"):
        close_group_member(only, group_config)

    assert "leaving the consumer group failed" in caplog.text
    assert "the listener's bug" in caplog.text
    with pytest.raises(RuntimeError, match="closed"):
        only.assignment()


def test_a_member_of_the_consumer_protocol_leaves_without_waiting_for_its_member_id(
    group_config: dict[str, str | int],
    kafka_bootstrap: str,
    namespace: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """KIP-848's protocol keeps the member id after the member left: waiting for it to
    clear, as the classic protocol allows, would wait out the deadline on every close."""
    topic = create_topic(kafka_bootstrap, "closing", namespace)
    config = {k: v for k, v in group_config.items() if not k.startswith(_CLASSIC_ONLY)}
    config["group.protocol"] = "consumer"
    revoked: list[int] = []
    consumer = Consumer(config)

    def on_revoke(c: Consumer, tps: list[TopicPartition]) -> None:
        revoked.append(len(tps))
        c.incremental_unassign(tps)

    consumer.subscribe([topic], on_revoke=on_revoke)
    wait_until(lambda: consumer.poll(0.1) is None and consumer.assignment(), what="assigned")

    with caplog.at_level(logging.WARNING, logger="rmqcompat.closing"):
        close_group_member(consumer, config, timeout_s=30)

    assert revoked == [1]
    assert "still in its group" not in caplog.text
