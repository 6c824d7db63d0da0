"""``rmqcompat audit``: options in, report out (the figures themselves: test_audit_batch)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from audit_seed import NOW_MS, G, Scenario, T, write_events
from click.testing import CliRunner, Result
from pyspark.sql import SparkSession

from rmqcompat.cli.main import main
from rmqcompat.config import ClientConfig


def _audit_seeded(bootstrap: str, namespace: str, *options: str) -> Result:
    """``rmqcompat audit *options`` of a namespace holding the seeded scenario's events."""
    write_events(ClientConfig(bootstrap, namespace), Scenario(namespace).build().events)
    args = ["--bootstrap-servers", bootstrap, "--namespace", namespace, "audit", *options]
    return CliRunner().invoke(main, args)


@pytest.mark.integration
def test_batch_audit_of_one_group(
    spark: SparkSession, kafka_bootstrap: str, namespace: str, tmp_path: Path
) -> None:
    options = ["--group", G, "--out", str(tmp_path), "--now", str(NOW_MS), "--grace", "10m"]
    result = _audit_seeded(kafka_bootstrap, namespace, *options)
    assert result.exit_code == 0, result.output
    header, line = result.output.splitlines()[:2]
    assert header.split()[:4] == ["group", "topic", "produced", "first_ok"]
    assert line.split()[:4] == [G, T, "11", "2"]
    report = json.loads((tmp_path / "report.json").read_text())
    assert [(e["group"], e["lost"]) for e in report["groups"]] == [(G, 1)]
    assert not spark.sparkContext._jsc.sc().isStopped()  # the test session was not stopped


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--stream"], "--stream needs --checkpoint"),
        (["--since", "yesterday"], "neither epoch ms nor an ISO-8601 time"),
        (["--grace", "soon"], "is not <number>"),
        (["--ladder-late", "soon"], "is not <number>"),
        (["--forward-late", "1 s"], "is not <number>"),
        (["--kafka-option", "no-equals"], "KEY=VALUE"),
        (["--message-delay-level", "1s x"], "delay level"),
        (["--master", "local[x]"], "'local[x]' is not a Spark master"),
        (["--master", "spark://127.0.0.1"], "'spark://127.0.0.1' is not a Spark master"),
    ],
)
def test_bad_options_are_usage_errors(tmp_path: Path, extra: list[str], message: str) -> None:
    result = CliRunner().invoke(
        main, ["--bootstrap-servers", "h:1", "audit", "--out", str(tmp_path), *extra]
    )
    assert result.exit_code == 2
    assert message in result.output


@pytest.mark.integration
def test_a_namespace_without_trace_topic_is_one_error_before_spark(
    kafka_bootstrap: str, namespace: str, tmp_path: Path
) -> None:
    args = ["--bootstrap-servers", kafka_bootstrap, "--namespace", namespace, "audit"]
    result = CliRunner().invoke(main, [*args, "--out", str(tmp_path)])
    assert result.exit_code == 1
    assert result.output == (
        f"Error: no trace topic {namespace}.rmq.trace at {kafka_bootstrap}: nothing has been"
        f" traced in namespace {namespace!r} (clients create it when they first trace; so does"
        " `rmqcompat topics create`)\n"
    )
    assert not (tmp_path / "report.json").exists()


@pytest.mark.integration
def test_a_failing_spark_job_is_one_error(
    spark: SparkSession, kafka_bootstrap: str, namespace: str, tmp_path: Path
) -> None:
    options = ["--out", str(tmp_path), "--kafka-option", "security.protocol=NOPE"]
    result = _audit_seeded(kafka_bootstrap, namespace, *options)
    assert result.exit_code == 1
    assert result.output.startswith(
        "Error: the Spark audit failed: org.apache.kafka.common.config.ConfigException:"
        " Invalid value NOPE for configuration security.protocol"
    )
    assert len(result.output.splitlines()) == 1


def test_an_unreachable_broker_is_one_error(tmp_path: Path) -> None:
    args = ["--bootstrap-servers", "127.0.0.1:1", "--timeout", "0.5", "audit"]
    result = CliRunner().invoke(main, [*args, "--out", str(tmp_path)])
    assert result.exit_code == 1
    assert result.output.startswith("Error: no broker at 127.0.0.1:1 answered within 0.5 s")


def test_cli_and_sdk_do_not_import_pyspark() -> None:
    code = (
        "import sys, rmqcompat, rmqcompat.cli.main, rmqcompat.trace\n"
        "rmqcompat.DefaultMQProducer, rmqcompat.DefaultMQPushConsumer, rmqcompat.DelayForwarder\n"
        "print('pyspark' in sys.modules)"
    )
    assert subprocess.check_output([sys.executable, "-c", code], text=True).strip() == "False"
