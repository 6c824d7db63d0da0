"""The direct fetch's routing of partitions (``rmqcompat.consumer.fetcher``), without a
broker: a partition it cannot forward is read through ``consume()`` and logged; once the
fetch is closed (the consumer is leaving its group) nothing is routed or logged."""

from __future__ import annotations

import logging

from confluent_kafka import TopicPartition

from rmqcompat.consumer.fetcher import DirectFetcher


class FakeDirect:
    """Records forwards; refuses them as the core does once closed, or for ``refused``."""

    def __init__(self, refused: tuple[str, int] | None = None) -> None:
        self.forwarded: list[tuple[str, int]] = []
        self.refused = refused
        self.closed = False

    def forward(self, topic: str, partition: int) -> None:
        if self.closed:
            raise RuntimeError("the consumer is closed")
        if (topic, partition) == self.refused:
            raise RuntimeError("no queue for that partition")
        self.forwarded.append((topic, partition))

    def close(self) -> None:
        self.closed = True


def test_a_partition_that_cannot_be_forwarded_is_logged_and_the_others_are_routed(caplog):
    direct = FakeDirect(refused=("T", 1))
    fetcher = DirectFetcher(None, direct)  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING, "rmqcompat.consumer"):
        fetcher.route([TopicPartition("T", p) for p in range(3)])
    assert direct.forwarded == [("T", 0), ("T", 2)]
    assert "T[1] read through consume(): no queue for that partition" in caplog.text


def test_a_closed_fetch_routes_nothing_and_logs_nothing(caplog):
    direct = FakeDirect()
    fetcher = DirectFetcher(None, direct)  # type: ignore[arg-type]
    fetcher.route([TopicPartition("T", 0)])
    fetcher.close()
    with caplog.at_level(logging.DEBUG, "rmqcompat.consumer"):
        fetcher.route([TopicPartition("T", 1)])  # a rebalance served while leaving
    assert direct.forwarded == [("T", 0)] and caplog.text == ""
