"""A subscribed partition no member of the group owns makes the consumer rejoin."""

from __future__ import annotations

from concurrent.futures import Future
from types import SimpleNamespace
from typing import Any

from confluent_kafka import ConsumerGroupState, KafkaError, KafkaException, TopicPartition

from rmqcompat.consumer.unowned import UnownedWatch, unowned


def test_unowned_partitions_are_those_of_the_topics_nobody_owns():
    counts = {"Orders": 2, "retry": 1}
    assert unowned(counts, [("Orders", 0), ("Orders", 1)]) == {("retry", 0)}
    assert unowned(counts, [("Orders", 0), ("Orders", 1), ("retry", 0), ("other", 0)]) == set()
    assert unowned({}, [("Orders", 0)]) == set()


def _done(value: Any) -> Future[Any]:
    future: Future[Any] = Future()
    future.set_result(value)
    return future


def _failed() -> Future[Any]:
    future: Future[Any] = Future()
    future.set_exception(KafkaException(KafkaError(KafkaError._TIMED_OUT)))
    return future


class _Admin:
    """Answers with the group's ``owned`` partitions in ``state`` and ``counts``."""

    def __init__(self, owned: list[tuple[str, int]], counts: dict[str, int]) -> None:
        self.owned = owned
        self.counts = counts
        self.state = ConsumerGroupState.STABLE
        self.idle = 0  # members that own nothing
        self.asked = 0

    def describe_consumer_groups(self, group_ids: list[str]) -> dict[str, Future[Any]]:
        self.asked += 1
        members = [
            SimpleNamespace(assignment=SimpleNamespace(topic_partitions=[TopicPartition(t, p)]))
            for t, p in self.owned
        ]
        members += [SimpleNamespace(assignment=None) for _ in range(self.idle)]
        return {group_ids[0]: _done(SimpleNamespace(state=self.state, members=members))}

    def describe_topics(self, topics: Any) -> dict[str, Future[Any]]:
        return {
            t: _done(SimpleNamespace(partitions=[None] * n)) if n else _failed()
            for t, n in self.counts.items()
            if t in topics.topic_names
        }


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _checks(admin: _Admin, times: int, topics: list[str] | None = None) -> list[bool]:
    clock = _Clock()
    watch = UnownedWatch(admin, "g", topics or ["Orders", "retry"], clock, interval_s=10.0)  # type: ignore[arg-type]
    out = []
    for _ in range(times):
        clock.now += 5.0
        out.append(watch.due())
    return out


def test_a_partition_unowned_at_two_checks_in_a_row_makes_the_group_rejoin():
    """The retry topic left out of the assignment (the leader's metadata lacked it):
    asked at the first check, seen unowned at the second, confirmed at the third."""
    admin = _Admin([("Orders", 0), ("Orders", 1)], {"Orders": 2, "retry": 1})
    assert _checks(admin, 6) == [False, False, False, False, False, True]
    assert admin.asked == 3  # every 10 s, not every call


def test_once_rejoined_it_takes_two_more_checks_to_rejoin_again():
    admin = _Admin([("Orders", 0)], {"Orders": 1, "retry": 1})
    assert _checks(admin, 10) == [False] * 5 + [True] + [False] * 3 + [True]


def test_every_partition_owned_never_rejoins():
    admin = _Admin([("Orders", 0), ("Orders", 1), ("retry", 0)], {"Orders": 2, "retry": 1})
    assert not any(_checks(admin, 10))


def test_a_partition_unowned_only_for_a_moment_is_no_reason():
    """Between the two rounds of a cooperative rebalance a partition is unowned for a
    moment: seen in one answer, owned in the next, it does not count."""
    admin = _Admin([], {"Orders": 2})
    clock = _Clock()
    watch = UnownedWatch(admin, "g", ["Orders"], clock, interval_s=10.0)  # type: ignore[arg-type]
    both, one = [("Orders", 0), ("Orders", 1)], [("Orders", 0)]
    seen = []
    for owned in (one, both, one, both, both):  # as each check asks; read at the next
        admin.owned = owned
        clock.now += 10.0
        seen.append(watch.due())
    assert seen == [False] * 5


def test_a_group_rebalancing_or_described_as_stable_without_members_is_not_judged():
    admin = _Admin([("Orders", 0)], {"Orders": 1, "retry": 1})
    admin.state = ConsumerGroupState.PREPARING_REBALANCING
    assert not any(_checks(admin, 10))
    admin = _Admin([], {"Orders": 1, "retry": 1})  # Tansu's answer: unknowable
    assert not any(_checks(admin, 10))
    admin = _Admin([], {"Orders": 1, "retry": 1})
    admin.idle = 2  # members, none with an assignment: a broker not reporting them
    assert not any(_checks(admin, 10))


def test_a_topic_that_cannot_be_described_is_not_judged():
    """A topic the broker does not know (yet): librdkafka's metadata refresh picks it up."""
    admin = _Admin([("Orders", 0)], {"Orders": 1, "retry": 0})
    assert not any(_checks(admin, 10))


def test_a_closed_watch_lets_its_admin_client_go_and_asks_nothing():
    admin = _Admin([("Orders", 0)], {"Orders": 1, "retry": 1})
    clock = _Clock()
    watch = UnownedWatch(admin, "g", ["Orders", "retry"], clock, interval_s=10.0)  # type: ignore[arg-type]
    watch.close()
    for _ in range(5):
        clock.now += 10.0
        assert not watch.due()
    assert admin.asked == 0


class _Consumer:
    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []

    def unsubscribe(self) -> None:
        self.calls.append(("unsubscribe", []))

    def subscribe(self, topics: list[str], **_callbacks: Any) -> None:
        self.calls.append(("subscribe", topics))


def test_rejoining_leaves_the_group_before_subscribing_again():
    """librdkafka ignores a subscribe to the topics it has already: no rebalance."""
    admin = _Admin([("Orders", 0)], {"Orders": 1, "retry": 1})
    clock = _Clock()
    watch = UnownedWatch(admin, "g", ["Orders", "retry"], clock, interval_s=10.0)  # type: ignore[arg-type]
    consumer = _Consumer()

    def subscribe(c: _Consumer) -> None:
        c.subscribe(["Orders", "retry"])

    rejoined = []
    for _ in range(6):
        clock.now += 5.0
        rejoined.append(watch.rejoin_if_due(consumer, subscribe))  # type: ignore[arg-type]
    assert rejoined == [False] * 5 + [True]
    assert consumer.calls == [("unsubscribe", []), ("subscribe", ["Orders", "retry"])]
