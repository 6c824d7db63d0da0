"""``rmqcompat audit``: options in, report out (the figures themselves: test_audit_batch)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from audit_seed import NOW_MS, G, Scenario, T, write_events
from click.testing import CliRunner
from pyspark.sql import SparkSession

from rmqcompat.cli.main import main
from rmqcompat.config import ClientConfig


@pytest.mark.integration
def test_batch_audit_of_one_group(
    spark: SparkSession, kafka_bootstrap: str, namespace: str, tmp_path: Path
) -> None:
    write_events(ClientConfig(kafka_bootstrap, namespace), Scenario(namespace).build().events)
    args = ["--bootstrap-servers", kafka_bootstrap, "--namespace", namespace, "audit"]
    args += ["--group", G, "--out", str(tmp_path), "--now", str(NOW_MS), "--grace", "10m"]
    result = CliRunner().invoke(main, args)
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
        (["--kafka-option", "no-equals"], "KEY=VALUE"),
        (["--message-delay-level", "1s x"], "delay level"),
    ],
)
def test_bad_options_are_usage_errors(tmp_path: Path, extra: list[str], message: str) -> None:
    result = CliRunner().invoke(
        main, ["--bootstrap-servers", "h:1", "audit", "--out", str(tmp_path), *extra]
    )
    assert result.exit_code == 2
    assert message in result.output


def test_cli_and_sdk_do_not_import_pyspark() -> None:
    code = (
        "import sys, rmqcompat, rmqcompat.cli.main, rmqcompat.trace\n"
        "rmqcompat.DefaultMQProducer, rmqcompat.DefaultMQPushConsumer, rmqcompat.DelayForwarder\n"
        "print('pyspark' in sys.modules)"
    )
    assert subprocess.check_output([sys.executable, "-c", code], text=True).strip() == "False"
