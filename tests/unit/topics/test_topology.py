"""Building the topic topology (pure): names per kind, specs, validation before I/O."""

from __future__ import annotations

import pytest

from rmqcompat.errors import ConfigError, InvalidNameError, TopologyError
from rmqcompat.message import (
    DEFAULT_MAX_MESSAGE_SIZE,
    KAFKA_DEFAULT_MAX_MESSAGE_BYTES,
    RECORD_HEADROOM,
    max_record_bytes,
)
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.spec import MAX_MESSAGE_BYTES, TopicSpec, TopologySpec
from rmqcompat.topics.topology import (
    Mismatch,
    VerifyReport,
    attempt_topology,
    build_topology,
    consumer_topology,
    delay_topology,
    replay_topology,
    system_topology,
    with_partitions,
)

DEFAULT_LEVEL_NAMES = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h".split()


def test_full_topology_for_groups_and_topics() -> None:
    topology = build_topology(groups=["G1", "G2"], topics=["T"], namespace="ns")
    expected = {
        "T": "ns.T",
        "%RETRY%G1": "ns.rmq.retry.G1",
        "%DLQ%G1": "ns.rmq.dlq.G1",
        "%RETRY%G2": "ns.rmq.retry.G2",
        "%DLQ%G2": "ns.rmq.dlq.G2",
        **{f"%SCHEDULE%{d}": f"ns.rmq.delay.{d}" for d in DEFAULT_LEVEL_NAMES},
        "RMQ_SYS_TRACE_TOPIC": "ns.rmq.trace",
        "RMQ_SYS_QUARANTINE_TOPIC": "ns.rmq.quarantine",
        "RMQ_SYS_RECALL_TOPIC": "ns.rmq.recall",
        "RMQ_SYS_REPLAY_LOG": "ns.rmq.replay-log",
    }
    assert topology.names() == expected
    assert topology.namespace == "ns"


def test_empty_topology_still_has_levels_and_the_system_topics() -> None:
    names = build_topology(levels=DelayLevels.parse("100ms 1s")).names()
    assert names == {
        "%SCHEDULE%100ms": "rmq.delay.100ms",
        "%SCHEDULE%1s": "rmq.delay.1s",
        "RMQ_SYS_TRACE_TOPIC": "rmq.trace",
        "RMQ_SYS_QUARANTINE_TOPIC": "rmq.quarantine",
        "RMQ_SYS_RECALL_TOPIC": "rmq.recall",
        "RMQ_SYS_REPLAY_LOG": "rmq.replay-log",
    }


def test_duplicates_are_listed_once() -> None:
    topology = build_topology(groups=["G", "G"], topics=["T", "T"])
    logicals = [topic.logical for topic in topology.topics]
    assert (
        len(logicals) == len(set(logicals)) == 1 + 2 + 18 + 4
    )  # T, retry + DLQ of G, levels, trace + quarantine + replay ledger


def test_each_kind_gets_its_spec() -> None:
    spec = TopologySpec(
        business=TopicSpec(partitions=2),
        retry=TopicSpec(partitions=3),
        dlq=TopicSpec(partitions=4, configs={"retention.ms": "-1"}),
        delay=TopicSpec(partitions=5),
        trace=TopicSpec(partitions=6),
        quarantine=TopicSpec(partitions=7),
    )
    topology = build_topology(groups=["G"], topics=["T"], spec=spec)
    by_name = {topic.logical: (topic.kind, topic.spec.partitions) for topic in topology.topics}
    assert by_name["T"] == ("business", 2)
    assert by_name["%RETRY%G"] == ("retry", 3)
    assert by_name["%DLQ%G"] == ("dlq", 4)
    assert by_name["%SCHEDULE%10s"] == ("delay", 5)
    assert by_name["RMQ_SYS_TRACE_TOPIC"] == ("trace", 6)
    assert by_name["RMQ_SYS_QUARANTINE_TOPIC"] == ("quarantine", 7)
    assert topology.specs()["%DLQ%G"].configs["retention.ms"] == "-1"


def test_every_topic_fits_the_largest_body_the_clients_accept() -> None:
    # Apache Kafka's default max.message.bytes is ~1 MiB; RocketMQ's limit is 4 MiB.
    specs = build_topology(groups=["G"], topics=["T"]).specs()
    limit = max_record_bytes(DEFAULT_MAX_MESSAGE_SIZE)
    assert limit >= DEFAULT_MAX_MESSAGE_SIZE + RECORD_HEADROOM
    assert {name: spec.configs[MAX_MESSAGE_BYTES] for name, spec in specs.items()} == dict.fromkeys(
        specs, str(limit)
    )


def test_topics_are_sized_for_the_given_max_message_size() -> None:
    specs = build_topology(groups=["G"], max_message_size=10 << 20).specs()
    assert specs["%RETRY%G"].configs[MAX_MESSAGE_BYTES] == str((10 << 20) + RECORD_HEADROOM)


def test_small_max_message_size_never_shrinks_topics_below_kafkas_default() -> None:
    spec = TopicSpec().sized_for(100)
    assert spec.configs[MAX_MESSAGE_BYTES] == str(KAFKA_DEFAULT_MAX_MESSAGE_BYTES)


def test_an_explicit_max_message_bytes_is_kept() -> None:
    spec = TopologySpec(dlq=TopicSpec(configs={MAX_MESSAGE_BYTES: "123456"}))
    assert spec.sized_for(10 << 20).dlq.configs[MAX_MESSAGE_BYTES] == "123456"
    assert (
        spec.sized_for(10 << 20).retry.configs["retention.ms"] == spec.retry.configs["retention.ms"]
    )


def test_bad_max_message_size_is_refused() -> None:
    with pytest.raises(ConfigError, match="max_message_size"):
        build_topology(max_message_size=0)


def test_default_specs_keep_dead_letters_forever() -> None:
    specs = build_topology(groups=["G"]).specs()
    assert specs["%DLQ%G"].configs["retention.ms"] == "-1"
    assert specs["RMQ_SYS_QUARANTINE_TOPIC"].configs["retention.ms"] == "-1"


@pytest.mark.parametrize(
    ("kwargs", "rule"),
    [
        ({"groups": ["a.b"]}, "RocketMQ"),
        ({"topics": ["a b"]}, "RocketMQ"),
        ({"topics": ["t" * 128]}, "127"),
        ({"namespace": "rmq"}, "reserved"),
        ({"namespace": "a.b"}, "namespace"),
        ({"groups": ["|" * 100]}, "249"),
        ({"groups": ["g" * 121]}, "120"),
        ({"topics": ["%RETRY%G"]}, "internal"),
        ({"topics": ["%DLQ%G"]}, "internal"),
        ({"topics": ["%SCHEDULE%10s"]}, "internal"),
        ({"topics": ["RMQ_SYS_TRACE_TOPIC"]}, "internal"),
        ({"topics": ["RMQ_SYS_REPLAY_LOG"]}, "internal"),
        ({"topics": ["RMQ_SYS_TRANS_HALF_TOPIC"]}, "internal"),
    ],
)
def test_bad_names_are_refused_before_io(kwargs: dict, rule: str) -> None:
    with pytest.raises(InvalidNameError, match=rule):
        build_topology(**kwargs)


def test_business_topic_with_rocketmq_only_characters_is_mapped() -> None:
    assert build_topology(topics=["a%b"]).names()["a%b"] == "rmq.x.a.25b"


def test_with_partitions_overrides_only_the_named_kinds() -> None:
    base = TopologySpec()
    spec = with_partitions(base, {"business": 8, "delay": 2})
    assert spec.business.partitions == 8
    assert spec.delay.partitions == 2
    assert spec.delay.configs == base.delay.configs
    assert spec.retry == base.retry


@pytest.mark.parametrize(("overrides", "why"), [({"nope": 1}, "unknown"), ({"dlq": 0}, ">= 1")])
def test_with_partitions_rejects_bad_overrides(overrides: dict[str, int], why: str) -> None:
    with pytest.raises(ConfigError, match=why):
        with_partitions(TopologySpec(), overrides)


def test_verify_report_lists_every_mismatch() -> None:
    missing = Mismatch("%DLQ%G", "rmq.dlq.G", "missing", "topic", "nothing")
    wrong = Mismatch("T", "T", "partitions", "4", "1")
    report = VerifyReport((missing, wrong))
    assert not report.ok
    with pytest.raises(TopologyError) as info:
        report.raise_for_mismatches()
    assert "rmq.dlq.G" in str(info.value) and "missing" in str(info.value)
    assert "partitions expected 4, found 1" in str(info.value)


def test_empty_verify_report_is_ok() -> None:
    report = VerifyReport(())
    assert report.ok
    report.raise_for_mismatches()


# -- what each client creates: subsets of the deployment's topology, by the same rules ---

LEVELS_2 = DelayLevels.parse("1s 5s 5s")
SIZE = 6 << 20


def _full(**kwargs: object) -> dict[str, tuple[str, TopicSpec]]:
    topology = build_topology(
        groups=["G"], levels=LEVELS_2, namespace="ns", max_message_size=SIZE, **kwargs
    )
    return {t.logical: (t.physical, t.spec) for t in topology.topics}


def _planned(topology) -> dict[str, tuple[str, TopicSpec]]:
    return {t.logical: (t.physical, t.spec) for t in topology.topics}


def test_a_consumer_creates_its_part_of_the_deployment_topology() -> None:
    consumer = consumer_topology(
        "G", levels=LEVELS_2, broadcasting=False, dead_letter=True,
        namespace="ns", max_message_size=SIZE,
    )  # fmt: skip
    assert _planned(consumer).items() <= _full().items()
    assert set(consumer.names()) == {
        "%RETRY%G", "%DLQ%G", "%SCHEDULE%1s", "%SCHEDULE%5s",
        "RMQ_SYS_TRACE_TOPIC", "RMQ_SYS_QUARANTINE_TOPIC",
    }  # fmt: skip


def test_a_consumer_without_dead_letters_creates_no_dlq() -> None:
    consumer = consumer_topology("G", levels=LEVELS_2, broadcasting=False, dead_letter=False)
    assert "%DLQ%G" not in consumer.names()
    assert "%RETRY%G" in consumer.names()


def test_a_broadcasting_consumer_creates_only_the_system_topics() -> None:
    consumer = consumer_topology("G", levels=LEVELS_2, broadcasting=True, dead_letter=True)
    assert set(consumer.names()) == {"RMQ_SYS_TRACE_TOPIC", "RMQ_SYS_QUARANTINE_TOPIC"}


def test_a_broadcasting_orderly_consumer_also_creates_its_dlq() -> None:
    """RocketMQ's orderly consumer dead-letters at its limit in either message model."""
    orderly = consumer_topology(
        "G", levels=LEVELS_2, broadcasting=True, dead_letter=True, orderly=True
    )
    assert set(orderly.names()) == {
        "%DLQ%G",
        "RMQ_SYS_TRACE_TOPIC",
        "RMQ_SYS_QUARANTINE_TOPIC",
    }
    silent = consumer_topology(
        "G", levels=LEVELS_2, broadcasting=True, dead_letter=False, orderly=True
    )
    assert "%DLQ%G" not in silent.names()


def test_forwarders_and_producers_create_the_level_and_system_topics() -> None:
    parking = delay_topology(levels=LEVELS_2, namespace="ns", max_message_size=SIZE)
    full = _full()
    assert _planned(parking) == {
        k: v for k, v in full.items() if not k.endswith("%G") and k != "RMQ_SYS_REPLAY_LOG"
    }


def test_client_topologies_validate_like_the_full_one() -> None:
    with pytest.raises(InvalidNameError):
        delay_topology(levels=LEVELS_2, namespace="rmq")
    with pytest.raises(ConfigError, match="max_message_size"):
        consumer_topology(
            "G", levels=LEVELS_2, broadcasting=False, dead_letter=True, max_message_size=0
        )


def test_the_replay_ledger_is_planned_as_one_compacted_partition_kept_forever() -> None:
    (ledger,) = [t for t in build_topology().topics if t.logical == "RMQ_SYS_REPLAY_LOG"]
    assert (ledger.kind, ledger.spec.partitions) == ("ledger", 1)
    assert ledger.spec.configs["cleanup.policy"] == "compact"
    assert ledger.spec.configs["retention.ms"] == "-1"


def test_a_simple_consumer_group_gets_its_attempt_log_compacted_for_a_week() -> None:
    planned = build_topology(simple_groups=["S"], namespace="ns")
    kinds = {t.logical: (t.kind, t.physical) for t in planned.topics}
    assert kinds["%RETRY%S"][0] == "retry" and kinds["%DLQ%S"][0] == "dlq"
    assert kinds["%ATTEMPT%S"] == ("attempts", "ns.rmq.attempt.S")
    (log,) = attempt_topology("S", namespace="ns").topics
    assert (log.logical, log.kind, log.spec.partitions) == ("%ATTEMPT%S", "attempts", 1)
    assert log.spec.configs["cleanup.policy"] == "compact,delete"
    assert log.spec.configs["retention.ms"] == str(7 * 24 * 3600 * 1000)
    assert "%ATTEMPT%G" not in build_topology(groups=["G"]).names()


def test_a_replay_creates_the_ledger_and_the_retry_topic_only_when_it_replays_there() -> None:
    to_retry = replay_topology("G", to_retry_topic=True, namespace="ns")
    assert [(t.logical, t.kind) for t in to_retry.topics] == [
        ("RMQ_SYS_REPLAY_LOG", "ledger"),
        ("%RETRY%G", "retry"),
    ]
    to_origin = replay_topology("G", to_retry_topic=False, namespace="ns")
    assert [t.logical for t in to_origin.topics] == ["RMQ_SYS_REPLAY_LOG"]


def test_system_topics_get_the_spec_of_their_kind_and_nothing_else_is_one() -> None:
    planned = system_topology(
        "RMQ_SYS_TRACE_TOPIC", "RMQ_SYS_TRANS_HALF_TOPIC", "RMQ_SYS_TRANS_OP_HALF_TOPIC"
    )
    spec = TopologySpec().sized_for(DEFAULT_MAX_MESSAGE_SIZE)
    assert [(t.kind, t.spec) for t in planned.topics] == [
        ("trace", spec.trace),
        ("transaction", spec.transaction),
        ("transaction", spec.transaction),
    ]
    with pytest.raises(InvalidNameError, match="Orders"):
        system_topology("Orders")
