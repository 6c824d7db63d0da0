"""Logical RocketMQ names <-> legal Apache Kafka names (SEMANTICS section 11, ARCHITECTURE).

Expected values come from the two naming rules, not from the implementation:
RocketMQ names match ``^[%|a-zA-Z0-9_-]+$`` (topic <= 127 chars); Apache Kafka names
match ``[a-zA-Z0-9._-]+``, are at most 249 chars and are never ``.`` or ``..``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from rmqcompat.errors import InvalidNameError, TopologyError
from rmqcompat.topics.naming import (
    QUARANTINE_TOPIC,
    TRACE_TOPIC,
    collision_key,
    delay_topic,
    dlq_topic,
    from_kafka_topic,
    is_dlq_topic,
    is_internal,
    is_retry_topic,
    retry_topic,
    to_kafka_topic,
    validate_consumer_group,
    validate_group,
    validate_namespace,
    validate_topic,
)
from rmqcompat.topics.provision import check_collisions

KAFKA_LEGAL = re.compile(r"[a-zA-Z0-9._-]+")
ROCKETMQ_CHARS = "%|abcXYZ019_-"
PLAIN_CHARS = "abcXYZ019_-"


def is_kafka_legal(name: str) -> bool:
    return bool(KAFKA_LEGAL.fullmatch(name)) and len(name) <= 249 and name not in (".", "..")


def rocketmq_names(max_size: int) -> st.SearchStrategy[str]:
    # A small alphabet makes '%' and '|' (the characters Kafka lacks) frequent.
    full = st.text(alphabet=st.sampled_from(ROCKETMQ_CHARS), min_size=1, max_size=max_size)
    return st.one_of(full, st.from_regex(r"[%|a-zA-Z0-9_-]{1,20}", fullmatch=True))


topics = rocketmq_names(127)
groups = st.one_of(rocketmq_names(255), rocketmq_names(20))
durations = st.from_regex(r"[1-9][0-9]{0,5}(ms|s|m|h|d)", fullmatch=True)
namespaces = st.one_of(
    st.just(""),
    st.text(alphabet=st.sampled_from(PLAIN_CHARS), min_size=1, max_size=64).filter(
        lambda ns: ns != "rmq"
    ),
)
logical_names = st.one_of(
    topics,
    groups.map(retry_topic),
    groups.map(dlq_topic),
    durations.map(delay_topic),
    st.sampled_from([TRACE_TOPIC, QUARANTINE_TOPIC, "%RETRY%", "%DLQ%", "%SCHEDULE%", "rmq"]),
)


def map_or_249(logical: str, namespace: str) -> str | None:
    """The physical name, or None when (and only when) the 249-char rule refused it."""
    try:
        return to_kafka_topic(logical, namespace)
    except InvalidNameError as exc:
        assert "249" in str(exc), f"refused for another reason: {exc}"
        return None


# --- logical names -------------------------------------------------------------------


def test_retry_and_dlq_topics_use_rocketmq_prefixes() -> None:
    assert retry_topic("G1") == "%RETRY%G1"
    assert dlq_topic("G1") == "%DLQ%G1"
    assert is_retry_topic("%RETRY%G1") and not is_retry_topic("%RETRY%")
    assert is_dlq_topic("%DLQ%G1") and not is_dlq_topic("%RETRY%G1")


@pytest.mark.parametrize("bad", ["", "a.b", "a b", "ü", "a/b", "a:b"])
def test_retry_topic_rejects_illegal_group(bad: str) -> None:
    with pytest.raises(InvalidNameError):
        retry_topic(bad)


# --- the mapping: legality, length, injectivity, inversion -----------------------------


@given(logical=logical_names, namespace=namespaces)
@example(logical="%RETRY%" + "%" * 255, namespace="")
@example(logical="a" * 127, namespace="n" * 64)
def test_every_legal_name_maps_to_a_kafka_legal_name_or_names_the_249_rule(
    logical: str, namespace: str
) -> None:
    physical = map_or_249(logical, namespace)
    if physical is not None:
        assert is_kafka_legal(physical), physical


@given(logical=logical_names, namespace=namespaces)
@example(logical="%ATTEMPT%G%1", namespace="ns")
def test_from_kafka_topic_inverts_to_kafka_topic(logical: str, namespace: str) -> None:
    physical = map_or_249(logical, namespace)
    assume(physical is not None)
    assert from_kafka_topic(physical) == (namespace, logical)


@given(name=rocketmq_names(40), namespace=namespaces, other_namespace=namespaces)
@example(name="G", namespace="", other_namespace="ns")
@example(name="rmq", namespace="", other_namespace="ns")
def test_same_text_in_every_kind_and_namespace_maps_to_distinct_names(
    name: str, namespace: str, other_namespace: str
) -> None:
    logicals = {name, retry_topic(name), dlq_topic(name), "%SCHEDULE%" + name, "x" + name}
    inputs = {(ns, lg) for ns in (namespace, other_namespace) for lg in logicals}
    outputs = {to_kafka_topic(lg, ns) for ns, lg in inputs}
    assert len(outputs) == len(inputs)


@given(a=logical_names, b=logical_names, ns_a=namespaces, ns_b=namespaces)
def test_distinct_inputs_give_distinct_outputs(a: str, b: str, ns_a: str, ns_b: str) -> None:
    assume((a, ns_a) != (b, ns_b))
    pa, pb = map_or_249(a, ns_a), map_or_249(b, ns_b)
    assume(pa is not None and pb is not None)
    assert pa != pb


@pytest.mark.parametrize(
    ("logical", "namespace"),
    [
        ("T", ""),
        ("T", "ns"),
        ("%RETRY%G", ""),
        ("%RETRY%G", "ns"),
        ("%DLQ%G", "ns"),
        ("%SCHEDULE%10s", "ns"),
        (TRACE_TOPIC, "ns"),
        (QUARANTINE_TOPIC, ""),
        ("a|b%c", "ns"),
    ],
)
def test_physical_names_avoid_percent_and_pipe(logical: str, namespace: str) -> None:
    physical = to_kafka_topic(logical, namespace)
    assert is_kafka_legal(physical)
    if namespace:
        assert physical.startswith(namespace + ".")


def test_plain_business_topic_keeps_its_name_without_namespace() -> None:
    assert to_kafka_topic("OrderTopic") == "OrderTopic"


def test_internal_topics_use_the_reserved_prefix() -> None:
    for logical in ("%RETRY%G", "%DLQ%G", "%SCHEDULE%1s", TRACE_TOPIC, QUARANTINE_TOPIC, "a%b"):
        assert to_kafka_topic(logical).startswith("rmq.")
        assert to_kafka_topic(logical, "ns").startswith("ns.rmq.")


def test_too_long_physical_name_names_the_249_rule() -> None:
    assert len(to_kafka_topic("t" * 127, "n" * 64)) == 64 + 1 + 127
    with pytest.raises(InvalidNameError, match="249"):
        to_kafka_topic(retry_topic("|" * 80))  # rmq.retry. + 80 x 3 = 250 chars
    with pytest.raises(InvalidNameError, match="249"):
        to_kafka_topic(dlq_topic("|" * 100), "n" * 64)  # each '|' takes 3 chars


# --- Apache Kafka's '.'/'_' collision rule --------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (("T", "ns"), ("ns_T", "")),
        (("%RETRY%G", "ns"), ("rmq_retry_G", "ns")),
    ],
)
def test_provisioning_refuses_names_that_collide_under_kafkas_dot_underscore_rule(
    a: tuple[str, str], b: tuple[str, str]
) -> None:
    first, second = to_kafka_topic(*a), to_kafka_topic(*b)
    assert collision_key(first) == collision_key(second)
    with pytest.raises(TopologyError, match="collides"):
        check_collisions([second], existing=[first])
    with pytest.raises(TopologyError, match="collides"):
        check_collisions([first, second], existing=[])


def test_provisioning_accepts_an_existing_topic_and_distinct_names() -> None:
    names = [to_kafka_topic(n, "ns") for n in ("T", "%RETRY%G", "%DLQ%G")]
    check_collisions(names, existing=names[:1])


# --- from_kafka_topic rejects what to_kafka_topic never produces ------------------------


@pytest.mark.parametrize(
    "physical",
    [
        "",
        ".",
        "..",
        "%RETRY%G",  # not Kafka-legal at all
        "a" * 250,
        "rmq.retry.",  # no group
        "rmq.retry.a.26b",  # unknown escape
        "rmq.retry.a.7C",  # upper-case escape is not the canonical one
        "rmq.retry.a..25",  # dangling separator
        "rmq.delay.010s",  # non-canonical duration
        "rmq.delay.",
        "rmq.nosuchkind.x",
        "rmq.x.plain",  # plain names are never escaped
        "rmq.x.RMQ_SYS_TRACE_TOPIC",  # the trace topic has its own fixed name
        "ns.rmq.trace.extra",
        "a.b.c",  # foreign dotted name
        "rmq.T",
        "bad.ns.T",
        "rmq.ns.T",  # 'rmq' is not a namespace
        "n" * 65 + ".T",  # namespace too long
    ],
)
def test_from_kafka_topic_rejects_non_canonical_or_foreign_names(physical: str) -> None:
    with pytest.raises(InvalidNameError):
        from_kafka_topic(physical)


@given(physical=st.from_regex(r"[a-zA-Z0-9._-]{1,60}", fullmatch=True))
@example(physical="rmq.retry.a.25")
@example(physical="ns.rmq.delay.1s")
def test_from_kafka_topic_accepts_only_canonical_names(physical: str) -> None:
    try:
        namespace, logical = from_kafka_topic(physical)
    except InvalidNameError:
        return
    assert to_kafka_topic(logical, namespace) == physical


def test_known_physical_names_decode() -> None:
    assert from_kafka_topic("OrderTopic") == ("", "OrderTopic")
    assert from_kafka_topic("ns.OrderTopic") == ("ns", "OrderTopic")
    assert from_kafka_topic("ns.rmq.retry.G") == ("ns", "%RETRY%G")
    assert from_kafka_topic("rmq.dlq.G") == ("", "%DLQ%G")
    assert from_kafka_topic("rmq.trace") == ("", TRACE_TOPIC)


# --- validation messages name the rule --------------------------------------------------


@pytest.mark.parametrize(
    ("check", "name", "rule"),
    [
        (validate_topic, "", "empty"),
        (validate_topic, "a.b", re.escape("^[%|a-zA-Z0-9_-]+$")),
        (validate_topic, "Ä", re.escape("^[%|a-zA-Z0-9_-]+$")),
        (validate_topic, "t" * 128, "127"),
        (validate_group, "g" * 256, "255"),
        (validate_group, "g g", re.escape("^[%|a-zA-Z0-9_-]+$")),
        (validate_namespace, "a.b", re.escape("[a-zA-Z0-9_-]")),
        (validate_namespace, "a%b", re.escape("[a-zA-Z0-9_-]")),
        (validate_namespace, "n" * 65, "64"),
        (validate_namespace, "rmq", "reserved"),
    ],
)
def test_illegal_names_are_rejected_naming_the_rule(
    check: Callable[[str], str], name: str, rule: str
) -> None:
    with pytest.raises(InvalidNameError, match=rule):
        check(name)


def test_legal_boundary_names_are_accepted() -> None:
    assert validate_topic("t" * 127) == "t" * 127
    assert validate_group("g" * 255) == "g" * 255
    assert validate_namespace("n" * 64) == "n" * 64
    assert validate_namespace("") == ""
    assert validate_topic("%|_-aZ9") == "%|_-aZ9"


@pytest.mark.parametrize("bad", ["", "a.b", "a" * 300])
def test_to_kafka_topic_rejects_illegal_logical_names_before_mapping(bad: str) -> None:
    with pytest.raises(InvalidNameError):
        to_kafka_topic(bad)


@pytest.mark.parametrize("bad", ["a.b", "rmq", "a b"])
def test_to_kafka_topic_rejects_illegal_namespace(bad: str) -> None:
    with pytest.raises(InvalidNameError):
        to_kafka_topic("T", bad)


@pytest.mark.parametrize("bad", ["10", "0s", "010s", "1.5s", "1x", ""])
def test_delay_topic_requires_a_canonical_duration(bad: str) -> None:
    with pytest.raises(InvalidNameError):
        delay_topic(bad)


def test_name_rules_remember_legal_names_and_refuse_an_illegal_one_every_time() -> None:
    """Hot paths (send-back, forwarder hops) ask the same rules for the same names per
    message: the answers for legal names are cached; a refusal is not."""
    for rule in (validate_topic, validate_consumer_group, to_kafka_topic):
        rule.cache_clear()
    assert to_kafka_topic("%RETRY%G", "ns") == to_kafka_topic("%RETRY%G", "ns") == "ns.rmq.retry.G"
    assert to_kafka_topic.cache_info().hits == 1
    for _ in range(2):
        with pytest.raises(InvalidNameError):
            validate_topic("bad name")
        with pytest.raises(InvalidNameError):
            to_kafka_topic("T", "rmq")
    assert validate_topic.cache_info().currsize == 0


@pytest.mark.parametrize(
    ("logical", "internal"),
    [
        ("%RETRY%G", True),
        ("%DLQ%G", True),
        ("%SCHEDULE%10s", True),
        ("RMQ_SYS_TRACE_TOPIC", True),
        ("RMQ_SYS_QUARANTINE_TOPIC", True),
        ("RMQ_SYS_REPLAY_LOG", True),
        ("RMQ_SYS_TRANS_HALF_TOPIC", True),
        ("RMQ_SYS_TRANS_OP_HALF_TOPIC", True),
        ("Orders", False),
        ("%RETRY%", False),  # a prefix alone names no group's topic
        ("RMQ_SYS_OTHER", False),
    ],
)
def test_is_internal_names_every_topic_rmqcompat_owns(logical: str, internal: bool) -> None:
    assert is_internal(logical) is internal
