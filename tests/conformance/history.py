"""From raw observations (what ``Driver.java`` prints, what ``rmqcompat_runner.py``
records: the same shape) to a history, and the field-by-field comparison of two histories.

A history maps each message key to its deliveries (attempt, reconsume times, topic seen,
tags, keys, body, the properties a user reads, the gap since the previous delivery) and
where it ended: ``consumed``, ``dlq`` (with the dead letter's reconsume times and
properties), ``discarded`` (failed and never seen again) or ``not delivered``; whether
the send was refused; for transactions also how often the local transaction ran, how
many checks decided it and how many copies of a half discarded at the check maximum
were kept; for FIFO scenarios also when each message first came (from the run's first
delivery) and, per message group, the order of its deliveries. Flattened, it is a
``{path: value}`` map such as ``{"k1.deliveries.1.reconsume_times": 1}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scenario import MISSING, Expected, Scenario, Transaction

#: Gaps between deliveries match when they differ by at most this much (RocketMQ's delay
#: queue checks every 100 ms, its timer has 1 s slots; our forwarder and consumer poll).
GAP_TOLERANCE_S = 0.8
#: First checks of a transaction match when they differ by at most this much: RocketMQ's
#: check service scans every second (observed: first check 1.0-1.5 s after the immunity),
#: rmqcompat's polls every 0.2 s.
CHECK_TOLERANCE_S = 1.8
#: Properties left out of the comparison, with the reason: artefacts of one system that no
#: listener relies on, or values that differ by nature.
IGNORED_PROPERTIES = {
    "UNIQ_KEY": "the message id: both carry one, its value differs by nature",
    "MIN_OFFSET": "RocketMQ's pull response annotates the queue's bounds; a Kafka fetch has none",
    "MAX_OFFSET": "RocketMQ's pull response annotates the queue's bounds; a Kafka fetch has none",
    "CONSUME_START_TIME": "a timestamp of the consume call",
    "CLUSTER": "the RocketMQ broker's cluster name",
    "MSG_REGION": "RocketMQ's region of the broker (trace routing)",
    "TRACE_ON": "RocketMQ's per-broker trace switch",
    "WAIT": "RocketMQ's waitStoreMsgOK flag of the send",
}
#: Properties compared by presence only: ids, queue numbers and timer timestamps that
#: differ by nature.
PRESENCE_ONLY = (
    "ORIGIN_MESSAGE_ID",
    "REAL_QID",
    "TIMER_DELIVER_MS",
    "TIMER_ENQUEUE_MS",
    "TIMER_DEQUEUE_MS",
    "TIMER_OUT_MS",
    "__transactionId__",
)


@dataclass(frozen=True)
class Difference:
    """One path where the histories differ; ``expected`` / ``deviation`` hold the reason of
    the scenario's entry that covers it, if any."""

    path: str
    rocketmq: Any
    rmqcompat: Any
    expected: str | None = None
    deviation: str | None = None

    def __str__(self) -> str:
        why = self.expected or self.deviation
        return f"{self.path}: RocketMQ {self.rocketmq!r}, rmqcompat {self.rmqcompat!r}" + (
            f" ({why})" if why else ""
        )


def history(raw: Mapping[str, Any], scenario: Scenario) -> dict[str, Any]:
    """The history of one run, keyed by message key."""
    out: dict[str, Any] = {}
    for send in scenario.messages:
        key = send.key
        deliveries = [d for d in raw["deliveries"] if d["key"] == key]
        letters = [d for d in raw["dlq"] if d["key"] == key]
        sent_ms = raw["sent"].get(key, {}).get("ms")
        refused = any(e["key"] == key for e in raw.get("send_errors", ()))
        entry: dict[str, Any] = {
            "send": "refused" if refused else "sent",
            "deliveries": _deliveries(deliveries, sent_ms if scenario.consumer_first else None),
            "end": _end(deliveries, letters),
        }
        if letters:
            entry["dlq"] = {
                "count": len(letters),
                "reconsume_times": letters[0]["reconsume_times"],
                "body": letters[0]["body"],
                "properties": _properties(letters[0]["properties"]),
            }
        if scenario.transaction is not None:
            entry["local_calls"] = sum(1 for c in raw["locals"] if c["key"] == key)
            entry["checks_to_decide"] = _checks_to_decide(raw, scenario, key)
            if scenario.transaction[key].local not in ("commit", "rollback"):
                entry["first_check_s"] = _first_check_s(raw, key, sent_ms)
            if _undecided(scenario.transaction[key]):
                copies = raw.get("check_max", ())
                entry["check_max_copies"] = sum(1 for c in copies if c["key"] == key)
        if scenario.fifo:
            entry["first_s"] = _first_s(raw, deliveries)
        out[key] = entry
    if scenario.fifo:
        out["groups"] = _group_orders(raw, scenario)
    return out


def _first_s(raw: Mapping[str, Any], deliveries: list[dict[str, Any]]) -> float | None:
    """Seconds from the run's first delivery to this message's first (None: never): when a
    message flowed, or waited behind another."""
    if not deliveries:
        return None
    return round((deliveries[0]["ms"] - min(d["ms"] for d in raw["deliveries"])) / 1000, 2)


def _group_orders(raw: Mapping[str, Any], scenario: Scenario) -> dict[str, list[str]]:
    """Per message group, the keys of its deliveries in the order they came."""
    groups = {send.key: send.message_group for send in scenario.messages}
    out: dict[str, list[str]] = {}
    for seen in raw["deliveries"]:
        out.setdefault(str(groups[seen["key"]]), []).append(seen["key"])
    return out


def _first_check_s(raw: Mapping[str, Any], key: str, sent_ms: int | None) -> float | None:
    """Seconds from the send to the first check (None without a check)."""
    checks = [c["ms"] for c in raw["checks"] if c["key"] == key]
    if not checks or sent_ms is None:
        return None
    return round((min(checks) - sent_ms) / 1000, 2)


def _undecided(transaction: Transaction) -> bool:
    """Whether no answer ever decides it. Only then are copies at the check maximum
    compared: RocketMQ 5.5.0, checking halves it has not yet seen decided, also copies
    decided ones there (observed with a 1 s check interval: a half committed locally, its
    message delivered once, and a copy of it in TRANS_CHECK_MAX_TIME_TOPIC)."""
    return all(a not in ("commit", "rollback") for a in (transaction.local, *transaction.checks))


def _checks_to_decide(raw: Mapping[str, Any], scenario: Scenario, key: str) -> int | None:
    """How many checks it took to decide the transaction: None when the local transaction
    decided it; else the checks up to the first that commits or rolls back (all of them
    when none does). Checks after a decision are left out: RocketMQ 5.5.0 goes on checking
    a decided half until its check service has read the decision (observed: a half
    committed locally was checked 3 times, its message delivered once)."""
    answers = scenario.transaction[key] if scenario.transaction else None
    if answers is None or answers.local in ("commit", "rollback"):
        return None
    done = sum(1 for c in raw["checks"] if c["key"] == key)
    decisive = [i for i, a in enumerate(answers.checks) if a in ("commit", "rollback")]
    return min(done, decisive[0] + 1) if decisive else done


def _deliveries(deliveries: list[dict[str, Any]], sent_ms: int | None) -> list[dict[str, Any]]:
    out = []
    previous = sent_ms
    for index, seen in enumerate(deliveries):
        props = seen["properties"]
        out.append(
            {
                "attempt": index,
                "reconsume_times": seen["reconsume_times"],
                "topic": seen["topic"],
                "tags": props.get("TAGS"),
                "keys": props.get("KEYS"),
                "body": seen["body"],
                "properties": _properties(props),
                "gap_s": None if previous is None else round((seen["ms"] - previous) / 1000, 2),
            }
            # a 5.x message's own fields: its delivery attempt (1-based) and message group
            | {name: seen[name] for name in ("delivery_attempt", "message_group") if name in seen}
        )
        previous = seen["ms"]
    return out


def _end(deliveries: list[dict[str, Any]], letters: list[dict[str, Any]]) -> str:
    if letters:
        return "dlq"
    if not deliveries:
        return "not delivered"
    return "consumed" if succeeded(deliveries[-1]) else "discarded"


def succeeded(seen: Mapping[str, Any]) -> bool:
    """Whether the listener's reply settled this delivery (its position within ackIndex)."""
    reply = seen["reply"]
    ack_index = reply.get("ack_index")
    return bool(reply["kind"] == "success" and (ack_index is None or seen["pos"] <= ack_index))


def _properties(props: Mapping[str, str]) -> dict[str, str]:
    return {
        name: "<present>" if name in PRESENCE_ONLY else value
        for name, value in sorted(props.items())
        if name not in IGNORED_PROPERTIES
    }


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """``{"k1": {"deliveries": [{"topic": "T"}]}}`` -> ``{"k1.deliveries.0.topic": "T"}``;
    an empty list or map stays a leaf, so "none" and "missing" differ."""
    if isinstance(value, Mapping) and value:
        items = value.items()
    elif isinstance(value, list) and value:
        items = enumerate(value)  # type: ignore[assignment]
    else:
        return {prefix: value}
    out: dict[str, Any] = {}
    for name, inner in items:
        out.update(flatten(inner, f"{prefix}.{name}" if prefix else str(name)))
    return out


def compare(
    rocketmq: Mapping[str, Any], ours: Mapping[str, Any], scenario: Scenario
) -> list[Difference]:
    """Every path where the two histories differ (gaps beyond :data:`GAP_TOLERANCE_S`),
    each with the scenario's expectation that covers it, if any."""
    left, right = flatten(rocketmq), flatten(ours)
    out = []
    for path in sorted(set(left) | set(right)):
        a, b = left.get(path, MISSING), right.get(path, MISSING)
        if _same(path, a, b):
            continue
        out.append(
            Difference(
                path,
                a,
                b,
                _reason(path, a, b, scenario.expected),
                _reason(path, a, b, scenario.deviations),
            )
        )
    return out


def _reason(path: str, a: Any, b: Any, entries: tuple[Expected, ...]) -> str | None:
    return next((e.reason for e in entries if e.covers(path, a, b)), None)


def _same(path: str, a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        tolerance = CHECK_TOLERANCE_S if path.endswith(".first_check_s") else GAP_TOLERANCE_S
        return abs(a - b) <= tolerance
    return bool(a == b)


def unused_expectations(differences: list[Difference], scenario: Scenario) -> list[str]:
    """Expected differences that did not occur: stale, so the docs' table would lie. A
    bounded lag (``lead_s``) is not stale when it happened to fall within the tolerance,
    nor is a race RocketMQ did not lose this time (``rocketmq_extra``)."""
    return [
        e.path
        for e in scenario.expected
        if e.lead_s is None
        and not e.rocketmq_extra
        and not any(e.covers(d.path, d.rocketmq, d.rmqcompat) for d in differences)
    ]
