"""The delay-forwarder against a real broker: delivery, order, pausing, hops, poison, sharing."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections import Counter

import pytest
from forwarder_helpers import (
    create_levels,
    create_topics,
    metric,
    now_ms,
    park_many,
    produce_raw,
    read,
)
from waiting import wait_until

from rmqcompat import properties as props
from rmqcompat.forwarder import DelayForwarder
from rmqcompat.quarantine import SOURCE_OFFSET
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.spec import TopicSpec

TABLE = "100ms 200ms 400ms 1h"
LEVELS = DelayLevels.parse(TABLE)
HOUR = 4


@pytest.fixture
def real_topic(kafka_bootstrap, namespace) -> str:
    create_topics(kafka_bootstrap, namespace, {"Orders": TopicSpec(1)})
    return f"{namespace}.Orders"


def test_due_record_arrives_no_earlier_than_due_with_its_due_time_removed(
    kafka_bootstrap, namespace, client_overrides, start_forwarder, real_topic
):
    user = {"TAGS": "A", "KEYS": "k1 k2", "app-prop": "x", props.UNIQ_KEY: "id-1"}
    start_forwarder(TABLE)
    (due,) = park_many(
        kafka_bootstrap,
        namespace,
        LEVELS,
        [{"value": b"hello", "key": b"k", "level": 3, "real_topic": "Orders", "props": user}],
    )
    (msg,) = read(kafka_bootstrap, real_topic, client_overrides, count=1)
    assert (msg.key(), msg.value()) == (b"k", b"hello")
    # as Apache RocketMQ 5.5.0 delivers it: REAL_TOPIC, REAL_QID and the level waited on
    kept = {props.REAL_TOPIC: "Orders", props.REAL_QID: "-1", props.DELAY: "3"}
    assert dict(msg.headers()) == {name: value.encode() for name, value in {**user, **kept}.items()}
    # The forwarder's produce time is the record's CreateTime (same host clock).
    assert msg.timestamp()[1] >= due


@pytest.mark.parametrize("max_held", [1000, 1])
def test_records_of_one_partition_keep_their_order(
    max_held, kafka_bootstrap, namespace, client_overrides, start_forwarder, real_topic
):
    create_levels(kafka_bootstrap, namespace, LEVELS, partitions=1)
    forwarder = start_forwarder(TABLE, max_held_per_partition=max_held)
    wait_until(forwarder.healthy, what="assignment")
    # Due 20 ms apart: with max_held=1 the partition is paused, moved back and resumed
    # over and over, and still no record is skipped or reordered.
    parked_at = now_ms()
    items = [
        {
            "value": str(i).encode(),
            "level": 2,
            "real_topic": "Orders",
            "parked_at": parked_at + 20 * i,
        }
        for i in range(50)
    ]
    park_many(kafka_bootstrap, namespace, LEVELS, items)
    got = read(kafka_bootstrap, real_topic, client_overrides, count=50)
    assert [int(m.value()) for m in got] == list(range(50))


def test_head_not_due_pauses_only_its_own_partition(
    kafka_bootstrap, namespace, client_overrides, start_forwarder, real_topic
):
    create_levels(kafka_bootstrap, namespace, LEVELS, partitions=2)
    hour_ms = LEVELS.delay_ms(HOUR)
    park_many(
        kafka_bootstrap,
        namespace,
        LEVELS,
        [
            {"value": b"later", "level": HOUR, "real_topic": "Orders", "partition": 0},
            {"value": b"also-later", "level": HOUR, "real_topic": "Orders", "partition": 0},
            {
                "value": b"due",
                "level": HOUR,
                "real_topic": "Orders",
                "partition": 1,
                "parked_at": now_ms() - hour_ms,
            },
        ],
    )
    forwarder = start_forwarder(TABLE, max_held_per_partition=1)
    (msg,) = read(kafka_bootstrap, real_topic, client_overrides, count=1)
    assert msg.value() == b"due"
    wait_until(
        lambda: metric(forwarder, "rmqcompat_forwarder_paused_partitions") == 1, what="pause"
    )
    assert [m.value() for m in read(kafka_bootstrap, real_topic, client_overrides)] == [b"due"]
    # The gauge is refreshed with each commit round; both "later" records stay parked.
    wait_until(
        lambda: metric(forwarder, "rmqcompat_forwarder_parked_records", level="1h") == 2, what="lag"
    )


def test_when_a_level_partition_stays_unowned_the_forwarder_rejoins_and_goes_on(
    kafka_bootstrap, namespace, client_overrides, start_forwarder, real_topic
):
    forwarder = start_forwarder(TABLE)
    wait_until(forwarder.healthy, what="assignment")
    loop, assignments = forwarder._loop, []
    on_assign = loop.on_assign
    loop.on_assign = lambda consumer, tps: (assignments.append(tps), on_assign(consumer, tps))
    # the unowned-partition check (rmqcompat.consumer.unowned) finds one, once
    verdicts = [True]
    forwarder._unowned.due = lambda: bool(verdicts) and verdicts.pop()
    wait_until(lambda: assignments, what="the group joined again")
    park_many(kafka_bootstrap, namespace, LEVELS, [{"value": b"after", "level": 1,
                                                    "real_topic": "Orders"}])  # fmt: skip
    (msg,) = read(kafka_bootstrap, real_topic, client_overrides, count=1)
    assert msg.value() == b"after"
    assert forwarder.healthy()


def test_timer_message_hops_through_levels_and_arrives_at_its_time(
    kafka_bootstrap, namespace, client_overrides, start_forwarder, real_topic
):
    forwarder = start_forwarder(TABLE)
    wait_until(forwarder.healthy, what="assignment")  # so the time is not spent joining the group
    deliver_at = now_ms() + 1_000
    timer = {props.TIMER_DELIVER_MS: str(deliver_at), "app-prop": "y"}
    first = 3  # the largest level that fits in 1000 ms
    park_many(
        kafka_bootstrap,
        namespace,
        LEVELS,
        [{"value": b"timer", "level": first, "real_topic": "Orders", "props": timer}],
    )
    (msg,) = read(kafka_bootstrap, real_topic, client_overrides, count=1)
    assert msg.value() == b"timer"
    assert msg.timestamp()[1] >= deliver_at
    headers = dict(msg.headers())
    timer = {name: headers.pop(name) for name in list(headers) if name.startswith("TIMER_")}
    kept = {props.REAL_TOPIC: b"Orders", props.REAL_QID: b"-1"}  # no DELAY: hops are ours
    assert headers == {"app-prop": b"y", **kept}
    # RocketMQ's timer properties: the time asked, first parked, released
    assert timer[props.TIMER_DELIVER_MS] == timer[props.TIMER_OUT_MS] == str(deliver_at).encode()
    assert int(timer[props.TIMER_ENQUEUE_MS]) < deliver_at <= int(timer[props.TIMER_DEQUEUE_MS])
    assert metric(forwarder, "rmqcompat_forwarder_hops_total", level="400ms") >= 1


def test_poison_records_are_quarantined_and_do_not_block_the_partition(
    kafka_bootstrap, namespace, client_overrides, start_forwarder, real_topic
):
    create_levels(kafka_bootstrap, namespace, LEVELS, partitions=1)
    level_topic = f"{namespace}.rmq.delay.100ms"
    produce_raw(
        kafka_bootstrap,
        level_topic,
        [
            {"value": b"no headers"},
            {"value": b"bad due", "headers": [("DUE_TIME", b"soon"), ("REAL_TOPIC", b"Orders")]},
        ],
    )
    park_many(
        kafka_bootstrap, namespace, LEVELS, [{"value": b"ok", "level": 1, "real_topic": "Orders"}]
    )
    forwarder = start_forwarder(TABLE)
    (msg,) = read(kafka_bootstrap, real_topic, client_overrides, count=1)
    assert msg.value() == b"ok"
    quarantined = read(kafka_bootstrap, f"{namespace}.rmq.quarantine", client_overrides, count=2)
    headers = [dict(m.headers()) for m in quarantined]
    assert [m.value() for m in quarantined] == [b"no headers", b"bad due"]
    assert b"DUE_TIME is missing" in headers[0][props.QUARANTINE_REASON]
    assert b"not a decimal integer" in headers[1][props.QUARANTINE_REASON]
    assert [h[SOURCE_OFFSET] for h in headers] == [b"0", b"1"]
    wait_until(
        lambda: metric(forwarder, "rmqcompat_forwarder_quarantined_total", level="100ms") == 2,
        what="quarantine count",
    )


def test_two_forwarders_share_the_partitions_and_forward_everything(
    kafka_bootstrap, namespace, client_overrides, start_forwarder, real_topic
):
    create_levels(kafka_bootstrap, namespace, LEVELS, partitions=4)
    first, second = start_forwarder(TABLE), start_forwarder(TABLE)

    def split() -> bool:
        a = metric(first, "rmqcompat_forwarder_assigned_partitions")
        b = metric(second, "rmqcompat_forwarder_assigned_partitions")
        return a > 0 and b > 0 and a + b == 4 * LEVELS.max_level

    wait_until(split, what="both forwarders to own level partitions")
    items = [
        {"value": str(i).encode(), "level": 1 + i % 3, "real_topic": "Orders", "partition": i % 4}
        for i in range(400)
    ]
    park_many(kafka_bootstrap, namespace, LEVELS, items)
    got = Counter(m.value() for m in read(kafka_bootstrap, real_topic, client_overrides, count=400))
    assert set(got) == {str(i).encode() for i in range(400)}
    duplicates = sum(got.values()) - len(got)
    print(f"two forwarders: 400 records, {duplicates} duplicates")

    def forwarded(f: DelayForwarder) -> float:
        labels = ("100ms", "200ms", "400ms")
        return sum(metric(f, "rmqcompat_forwarder_forwarded_total", level=lv) for lv in labels)

    # Counters move with delivery reports, a moment after the records became readable.
    wait_until(lambda: forwarded(first) + forwarded(second) >= 400, what="delivery reports")
    per_instance = [forwarded(first), forwarded(second)]
    print(f"forwarded per instance: {per_instance}")
    assert all(count > 0 for count in per_instance)


def test_metrics_endpoint_and_health_check(
    kafka_bootstrap, namespace, client_overrides, start_forwarder, real_topic
):
    forwarder = start_forwarder(TABLE, metrics_port=0)
    base = f"http://127.0.0.1:{forwarder.metrics_port}"
    wait_until(forwarder.healthy, what="assignment")
    with urllib.request.urlopen(f"{base}/health") as reply:
        assert reply.status == 200
    park_many(
        kafka_bootstrap, namespace, LEVELS, [{"value": b"m", "level": 1, "real_topic": "Orders"}]
    )
    read(kafka_bootstrap, real_topic, client_overrides, count=1)
    wait_until(
        lambda: metric(forwarder, "rmqcompat_forwarder_forwarded_total", level="100ms") == 1,
        what="forwarded count",
    )
    with urllib.request.urlopen(f"{base}/metrics") as reply:
        text = reply.read().decode()
    assert 'rmqcompat_forwarder_forwarded_total{level="100ms"} 1.0' in text
    assert "rmqcompat_forwarder_lateness_seconds_count 1.0" in text
    forwarder.request_stop()
    wait_until(lambda: not forwarder.healthy(), what="stop")
    with pytest.raises(urllib.error.HTTPError) as excinfo:
        urllib.request.urlopen(f"{base}/health")
    assert excinfo.value.code == 503
