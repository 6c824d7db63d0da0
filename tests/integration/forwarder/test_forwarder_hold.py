"""The forwarder's byte cap against a real broker: it pauses, and loses or reorders nothing."""

from __future__ import annotations

import pytest
from forwarder_helpers import create_levels, create_topics, metric, now_ms, park_many, read
from waiting import wait_until

from rmqcompat.forwarder import DelayForwarder
from rmqcompat.forwarder.holding import DEFAULT_MAX_HELD
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.spec import TopicSpec

TABLE = "100ms 1h"
LEVELS = DelayLevels.parse(TABLE)
HOUR = 2
BODY = 10 * 1024
COUNT = 60


@pytest.fixture
def forwarder(kafka_bootstrap, namespace, client_overrides):
    # One partition per level, created before start() (which would create the default count).
    create_levels(kafka_bootstrap, namespace, LEVELS, partitions=1)
    create_topics(kafka_bootstrap, namespace, {"Orders": TopicSpec(1)})
    # About five 10 KiB records fit; the record cap (10,000) is never reached here.
    instance = DelayForwarder(
        kafka_bootstrap,
        namespace=namespace,
        message_delay_level=TABLE,
        kafka_config=client_overrides,
        max_held_bytes_per_partition=5 * BODY + 1024,
    )
    instance.start()
    yield instance
    instance.shutdown()


def test_byte_cap_pauses_the_partition_and_nothing_is_lost_skipped_or_reordered(
    kafka_bootstrap, namespace, client_overrides, forwarder
):
    assert COUNT < DEFAULT_MAX_HELD  # so only the byte cap can pause the partition
    wait_until(forwarder.healthy, what="assignment")
    # All due about 2 s from now, 10 ms apart (1h level, parked just under an hour ago): the
    # head waits long enough for the held bytes to reach the cap and the pause to show.
    parked_at = now_ms() - LEVELS.delay_ms(HOUR) + 2_000
    items = [
        {
            "value": str(i).encode().ljust(BODY, b"x"),
            "key": f"k{i}".encode(),
            "level": HOUR,
            "real_topic": "Orders",
            "parked_at": parked_at + 10 * i,
        }
        for i in range(COUNT)
    ]
    dues = park_many(kafka_bootstrap, namespace, LEVELS, items)
    wait_until(
        lambda: metric(forwarder, "rmqcompat_forwarder_paused_partitions") == 1, what="pause"
    )
    got = read(kafka_bootstrap, f"{namespace}.Orders", client_overrides, count=COUNT)
    assert [int(m.value()[: m.value().index(b"x")]) for m in got] == list(range(COUNT))
    assert [m.key() for m in got] == [f"k{i}".encode() for i in range(COUNT)]
    assert all(len(m.value()) == BODY for m in got)
    assert all(m.timestamp()[1] >= due for m, due in zip(got, dues, strict=True))
    # Nothing more arrives later (no duplicate from the re-reads after each pause).
    assert len(read(kafka_bootstrap, f"{namespace}.Orders", client_overrides)) == COUNT
