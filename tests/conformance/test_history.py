"""The comparison's own rules (pure, no broker): how a history is built from raw
observations and how two histories are compared."""

from __future__ import annotations

from history import GAP_TOLERANCE_S, compare, flatten, history, unused_expectations
from scenario import LATER, SUCCESS, Expected, Reply, Scenario, Send, Transaction


def _seen(key, ms, reply, reconsume=0, pos=0, **props):
    return {
        "key": key,
        "topic": "T",
        "reconsume_times": reconsume,
        "msg_id": "id",
        "body": "b",
        "properties": {"KEYS": key, "UNIQ_KEY": "id", **props},
        "ms": ms,
        "pos": pos,
        "reply": reply,
    }


def _raw(deliveries, dlq=(), checks=()):
    return {"sent": {"k1": {"ms": 0}}, "deliveries": list(deliveries), "dlq": list(dlq),
            "checks": list(checks), "locals": []}  # fmt: skip


LATER_REPLY = {"kind": "later"}
OK_REPLY = {"kind": "success"}
SCENARIO = Scenario("s", (Send("k1"),), {"k1": (LATER, SUCCESS)})


def test_a_history_has_deliveries_with_gaps_and_the_end():
    raw = _raw([_seen("k1", 1000, LATER_REPLY), _seen("k1", 4000, OK_REPLY, reconsume=1)])
    (entry,) = history(raw, SCENARIO).values()
    assert [d["reconsume_times"] for d in entry["deliveries"]] == [0, 1]
    assert [d["gap_s"] for d in entry["deliveries"]] == [None, 3.0]
    assert entry["end"] == "consumed"
    assert "UNIQ_KEY" not in entry["deliveries"][0]["properties"]


def test_ends_dead_letter_discarded_and_ack_index():
    failed = _raw([_seen("k1", 0, LATER_REPLY)])
    assert history(failed, SCENARIO)["k1"]["end"] == "discarded"
    dead = _raw([_seen("k1", 0, LATER_REPLY)], dlq=[_seen("k1", 0, {}, reconsume=1)])
    assert history(dead, SCENARIO)["k1"]["dlq"]["reconsume_times"] == 1
    beyond = _raw([_seen("k1", 0, {"kind": "success", "ack_index": 0}, pos=1)])
    assert history(beyond, SCENARIO)["k1"]["end"] == "discarded"


def test_checks_after_a_decision_do_not_count():
    scenario = Scenario(
        "t", (Send("k1"),), transaction={"k1": Transaction("unknown", ("unknown", "commit"))}
    )
    raw = _raw([], checks=[{"key": "k1", "ms": t} for t in (1, 2, 3)])
    raw["check_max"] = [{"key": "k1"}]
    (entry,) = history(raw, scenario).values()
    assert entry["checks_to_decide"] == 2
    assert entry["first_check_s"] == 0.0  # sent at 0 ms, first check at 1 ms
    assert "check_max_copies" not in entry  # decided: a copy would be RocketMQ's check lag


def test_copies_at_the_check_maximum_count_for_undecided_transactions():
    scenario = Scenario("t", (Send("k1"),), transaction={"k1": Transaction("unknown")})
    raw = _raw([], checks=[{"key": "k1", "ms": 1}])
    raw["check_max"] = [{"key": "k1"}]
    assert history(raw, scenario)["k1"]["check_max_copies"] == 1


def test_flatten_keeps_empty_containers_as_leaves():
    assert flatten({"k": {"a": [1, {}], "b": []}}) == {"k.a.0": 1, "k.a.1": {}, "k.b": []}


def test_gaps_compare_within_the_tolerance_and_the_rest_exactly():
    ours = {"k1": {"gap_s": 3.0, "topic": "T"}}
    near = {"k1": {"gap_s": 3.0 + GAP_TOLERANCE_S - 0.05, "topic": "T"}}
    assert compare(near, ours, SCENARIO) == []
    far = {"k1": {"gap_s": 3.0 + GAP_TOLERANCE_S + 0.05, "topic": "U"}}
    assert [d.path for d in compare(far, ours, SCENARIO)] == ["k1.gap_s", "k1.topic"]


def test_expected_differences_and_deviations_carry_their_reason():
    scenario = Scenario(
        "s",
        (Send("k1"),),
        expected=(Expected("*.topic", "kept"), Expected("*.unused", "stale")),
        deviations=(Expected("*.tags", "to fix"),),
    )
    a, b = {"k1": {"topic": "T", "tags": "A"}}, {"k1": {"topic": "U", "tags": "B"}}
    differences = compare(a, b, scenario)
    assert [(d.expected, d.deviation) for d in differences] == [(None, "to fix"), ("kept", None)]
    assert unused_expectations(differences, scenario) == ["*.unused"]


def test_a_scenario_answers_per_attempt_and_repeats_its_last_answer():
    scenario = Scenario("s", (Send("k1"),), {"k1": (LATER, Reply("success", ack_index=0))})
    assert [scenario.reply("k1", n).kind for n in range(3)] == ["later", "success", "success"]
    assert scenario.reply("other", 0) == SUCCESS


def test_a_lag_covers_a_gap_only_within_its_window():
    lag = Expected("*.gap_s", "revive lag", lead_s=(1.0, 3.0))
    scenario = Scenario("s", (Send("k1"),), api="5.x", expected=(lag,))
    ours = {"k1": {"gap_s": 4.0}}
    (within,) = compare({"k1": {"gap_s": 6.0}}, ours, scenario)
    assert within.expected == "revive lag"
    (beyond,) = compare({"k1": {"gap_s": 7.5}}, ours, scenario)
    (behind,) = compare({"k1": {"gap_s": 2.0}}, ours, scenario)
    assert beyond.expected is None and behind.expected is None
    # a lag that happened to fall within the common tolerance is not stale
    assert unused_expectations(compare(ours, ours, scenario), scenario) == []


def test_a_rocketmq_race_covers_only_what_rocketmq_has_more_and_may_not_occur():
    race = Expected("k1.deliveries.1.*", "checked again", rocketmq_extra=True)
    scenario = Scenario("s", (Send("k1"),), expected=(race,))
    once = {"k1": {"deliveries": [{"attempt": 0}]}}
    twice = {"k1": {"deliveries": [{"attempt": 0}, {"attempt": 1}]}}
    (extra_on_rocketmq,) = compare(twice, once, scenario)
    assert extra_on_rocketmq.expected == "checked again"
    (extra_on_ours,) = compare(once, twice, scenario)
    assert extra_on_ours.expected is None
    (other_value,) = compare(twice, {"k1": {"deliveries": [{"attempt": 0}, {"attempt": 2}]}},
                             scenario)  # fmt: skip
    assert other_value.expected is None
    assert unused_expectations(compare(once, once, scenario), scenario) == []


def test_a_fifo_history_has_first_arrivals_and_each_groups_order():
    scenario = Scenario(
        "f",
        (Send("a1", message_group="A"), Send("a2", message_group="A"),
         Send("b1", message_group="B")),
        api="5.x",
        fifo=True,
    )  # fmt: skip
    raw = _raw(
        [
            _seen("a1", 1000, LATER_REPLY) | {"delivery_attempt": 1, "message_group": "A"},
            _seen("b1", 1000, OK_REPLY),
            _seen("a1", 3000, OK_REPLY) | {"delivery_attempt": 2, "message_group": "A"},
            _seen("a2", 3100, OK_REPLY),
        ]
    )
    out = history(raw, scenario)
    assert out["groups"] == {"A": ["a1", "a1", "a2"], "B": ["b1"]}
    assert [out[k]["first_s"] for k in ("a1", "b1", "a2")] == [0.0, 0.0, 2.1]
    attempts = [d["delivery_attempt"] for d in out["a1"]["deliveries"]]
    assert attempts == [1, 2] and out["a1"]["deliveries"][0]["message_group"] == "A"
