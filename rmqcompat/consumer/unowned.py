"""Partitions of subscribed topics that no member of the group owns: the group rejoins.

At each rebalance the group leader assigns the partitions of the topics it finds in a
metadata answer it asks for then. A broker that has not caught up with a topic's
creation yet (Apache Kafka brokers learn of a new topic one by one) leaves the topic out,
and librdkafka does not notice: its members' own metadata had the topic all along, so
nothing changed for them and no rebalance follows. Nobody reads the topic until the
group rebalances for another reason. Measured: the ``%RETRY%`` topic of the ladder
scenario (tests/ladder_scenario.py), created as its two consumers started, was assigned
to neither of them for minutes, with no error, even in a round where librdkafka's
metadata refresh was set to 10 s (three-node cluster, a node frozen for 2 s while the
consumers started: 2 rounds of 10; CI saw the same stall on a loaded machine). A short
refresh is not the answer anyway: at 10 s, a SIGKILLed broker made the group rebalance
every 10 s.

RocketMQ's clients re-balance every 20 s from the full list of members. Here each member
(of a CLUSTERING push consumer's group, of the forwarder group, for the level topics of
its delay table, or of a transaction producer's check group, for the half and op topics)
asks every :data:`CHECK_INTERVAL_S` how its group is assigned and
how many partitions its subscribed topics have, and rejoins (leaves the group and joins
it again: a rebalance, with fresh metadata) when some partition was owned by no member
of the stable group at two checks in a row: a cooperative rebalance leaves a partition
unowned for a moment between its two rounds. The requests never block the poll thread:
their answers are read at the next check.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from typing import Any

from confluent_kafka import Consumer, ConsumerGroupState, KafkaException, TopicCollection
from confluent_kafka.admin import AdminClient

from rmqcompat.wire import Key

_log = logging.getLogger("rmqcompat.consumer")

CHECK_INTERVAL_S = 10.0


def unowned(partitions: Mapping[str, int], owned: Iterable[Key]) -> set[Key]:
    """The partitions of ``partitions`` (topic -> partition count) not in ``owned``."""
    taken = set(owned)
    return {(t, p) for t, count in partitions.items() for p in range(count)} - taken


def rejoin(consumer: Consumer, subscribe: Callable[[Consumer], None]) -> None:
    """Leave the group and join it again with ``subscribe``.

    Leaving makes the group rebalance, and its leader reads the topics' metadata afresh;
    this member's partitions are revoked (committed) and assigned again. A subscribe alone
    would not do: librdkafka ignores a subscribe to the topics it is subscribed to already
    (measured: no rebalance followed).
    """
    consumer.unsubscribe()
    subscribe(consumer)


class UnownedWatch:
    """Tells the poll thread when its group should rejoin; owned by the poll thread."""

    def __init__(
        self,
        admin: AdminClient | None,
        group_id: str,
        topics: list[str],
        clock: Callable[[], float],
        interval_s: float = CHECK_INTERVAL_S,
    ) -> None:
        self._admin = admin
        self._group_id = group_id
        self._topics = topics
        self._clock = clock
        self._interval_s = interval_s
        self._next = clock() + interval_s
        self._group: Future[Any] | None = None
        self._described: dict[str, Future[Any]] = {}
        self._suspects: set[Key] = set()  # unowned at the last check

    def due(self) -> bool:
        """Whether the group should rejoin now (checks at most every ``interval_s``)."""
        now = self._clock()
        if now < self._next or self._admin is None:
            return False
        self._next = now + self._interval_s
        found = self._answers()
        self._ask()
        if found is None:  # not answered yet, or the group is rebalancing: keep suspects
            return False
        both, self._suspects = found & self._suspects, found
        if both:
            _log.warning(
                "group %s: no member owns %s; rejoining so the leader assigns them",
                self._group_id,
                ", ".join(f"{t}[{p}]" for t, p in sorted(both)),
            )
            self._suspects = set()
        return bool(both)

    def rejoin_if_due(self, consumer: Consumer, subscribe: Callable[[Consumer], None]) -> bool:
        """:func:`rejoin` with ``subscribe`` when :meth:`due` says so."""
        if not self.due():
            return False
        rejoin(consumer, subscribe)
        return True

    def close(self) -> None:
        """Let the admin client go (it has no close: it ends once nothing refers to it),
        so it does not outlive the consumer; :meth:`due` is False from now on."""
        self._admin, self._group, self._described = None, None, {}

    def _ask(self) -> None:
        if self._admin is None:
            return
        try:
            self._group = self._admin.describe_consumer_groups([self._group_id])[self._group_id]
            self._described = self._admin.describe_topics(TopicCollection(self._topics))
        except KafkaException as exc:  # e.g. the local queue is full: the next check asks
            _log.debug("group %s: cannot describe the group: %s", self._group_id, exc)
            self._group, self._described = None, {}

    def _answers(self) -> set[Key] | None:
        """The unowned partitions per the answers to the last requests; None: unknown."""
        group = self._group
        if group is None or not group.done() or group.exception() is not None:
            return None
        description = group.result()
        # a stable group of no members: an answer some brokers give (Tansu), unknowable;
        # so is one whose members own nothing at all
        if description.state != ConsumerGroupState.STABLE or not description.members:
            return None
        owned = [
            (tp.topic, tp.partition)
            for member in description.members
            if member.assignment is not None
            for tp in member.assignment.topic_partitions
        ]
        if not owned:  # members without assignments: a broker that does not report them
            return None
        counts = {}
        for topic, future in self._described.items():
            if future.done() and future.exception() is None:  # else unknown: not judged
                counts[topic] = len(future.result().partitions)
        return unowned(counts, owned)
