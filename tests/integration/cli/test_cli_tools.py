"""``rmqcompat produce | consume | msg show | topics describe`` on a real broker."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from consumer_helpers import create_topic

from rmqcompat.cli.main import EXIT_FAILED, EXIT_USAGE, main
from rmqcompat.topics.naming import dlq_topic


@pytest.fixture
def cli(kafka_bootstrap, namespace, client_overrides):
    def run(*args: str, stdin: bytes | None = None):
        base = ["--bootstrap-servers", kafka_bootstrap, "--namespace", namespace, "--timeout", "5"]
        for key, value in client_overrides.items():
            base += ["-X", f"{key}={value}"]
        return CliRunner().invoke(main, [*base, *args], input=stdin)

    return run


def _json(result) -> dict:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture
def topic(kafka_bootstrap, namespace) -> str:
    create_topic(kafka_bootstrap, "Orders", namespace, partitions=2)
    return "Orders"


def test_produce_then_find_peek_and_consume_as_a_group(cli, topic, tmp_path):
    first = _json(
        cli(
            "produce",
            "--topic",
            topic,
            "--tag",
            "TA",
            "--key",
            "k1",
            "--key",
            "k2",
            "--property",
            "p=v",
            "--body",
            "from arg",
            "--sharding-key",
            "s",
            "--json",
        )
    )
    assert first["status"] == "SEND_OK" and first["queue_offset"] >= 0
    (tmp_path / "b").write_bytes(b"from file")
    second = _json(cli("produce", "--topic", topic, "--body-file", str(tmp_path / "b"), "--json"))
    third = _json(cli("produce", "--topic", topic, "--json", stdin=b"from stdin"))

    shown = _json(cli("msg", "show", "--topic", topic, "--msg-id", first["msg_id"], "--json"))
    (found,) = shown["messages"]
    assert (found["body"], found["tags"], found["keys"]) == ("from arg", "TA", "k1 k2")
    assert found["properties"]["p"] == "v"
    by_offset = _json(
        cli("msg", "show", "--topic", topic, "--msg-id", first["offset_msg_id"], "--json")
    )
    assert by_offset["messages"][0]["msg_id"] == first["msg_id"]

    peeked = _json(cli("consume", "--topic", topic, "--peek", "--max", "10", "--json"))
    assert {m["body"] for m in peeked["messages"]} == {"from arg", "from file", "from stdin"}
    oldest = _json(
        cli("consume", "--topic", topic, "--peek", "--from-beginning", "--max", "1", "--json")
    )
    assert len(oldest["messages"]) == 1

    args = ["consume", "--topic", topic, "--group", "reader", "--from-beginning", "--max", "3"]
    consumed = _json(cli(*args, "--idle", "15", "--json"))
    assert sorted(m["msg_id"] for m in consumed["messages"]) == sorted(
        r["msg_id"] for r in (first, second, third)
    )
    again = _json(cli(*args, "--idle", "3", "--json"))  # committed: nothing new
    assert again["messages"] == []


def test_missing_message_and_bad_input(cli, topic):
    missing = cli("msg", "show", "--topic", topic, "--msg-id", "NOPE")
    assert missing.exit_code == EXIT_FAILED and "no message NOPE" in missing.stderr
    illegal = cli("produce", "--topic", "bad topic", "--body", "x")
    assert illegal.exit_code == EXIT_USAGE and "bad topic" in illegal.stderr
    both = cli("consume", "--topic", topic, "--peek", "--group", "g")
    assert both.exit_code == EXIT_USAGE
    late = cli("produce", "--topic", topic, "--body", "x", "--deliver-time", "soon")
    assert late.exit_code == EXIT_USAGE and "'soon' is not a time" in late.output


def test_describe_shows_offsets_retention_and_dead_letter_counts(cli, topic):
    args = ["--group", "G", "--topic", topic, "--message-delay-level", "1s"]
    before = {t["logical"]: t for t in _json(cli("topics", "describe", *args, "--json"))["topics"]}
    assert before[topic]["exists"] and before[topic]["partitions"] == 2
    assert not before["%DLQ%G"]["exists"] and before["%DLQ%G"]["waiting"] is None
    assert cli("topics", "create", *args).exit_code == 0
    cli("produce", "--topic", dlq_topic("G"), "--body", "dead")
    cli("produce", "--topic", topic, "--delay-level", "1", "--body", "parked")
    after = {t["logical"]: t for t in _json(cli("topics", "describe", *args, "--json"))["topics"]}
    assert after["%DLQ%G"]["waiting"] == 1
    assert after["%SCHEDULE%1s"]["waiting"] == 1  # no forwarder runs: still parked
    assert sum(after["%DLQ%G"]["end_offsets"]) == 1
    assert after["%DLQ%G"]["retention_ms"] == "-1"
    assert after["%RETRY%G"]["exists"] and after["%RETRY%G"]["waiting"] is None
    text = cli("topics", "describe", *args)
    assert text.exit_code == 0 and text.stdout.startswith("physical")
