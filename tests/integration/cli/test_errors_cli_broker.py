"""Issue 7 item 10 against a real broker: failures before the forwarder creates anything,
and ``spool resend`` naming unreadable files."""

from __future__ import annotations

import socket

from click.testing import CliRunner
from confluent_kafka.admin import AdminClient

from rmqcompat.cli.main import EXIT_FAILED, EXIT_USAGE, main


def _topics(bootstrap: str, namespace: str) -> list[str]:
    found = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=30).topics
    return [name for name in found if name.startswith(f"{namespace}.")]


def _forwarder(bootstrap: str, namespace: str, *args: str):
    return CliRunner().invoke(
        main,
        ["--bootstrap-servers", bootstrap, "--namespace", namespace, "forwarder", "run", *args],
    )


def test_busy_metrics_port_is_one_line_an_exit_code_and_creates_no_topic(
    kafka_bootstrap, namespace
):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        result = _forwarder(
            kafka_bootstrap, namespace, "--metrics-port", str(busy.getsockname()[1])
        )
    assert result.exit_code == EXIT_FAILED
    assert result.stderr.count("\n") == 1
    assert _topics(kafka_bootstrap, namespace) == []


def test_bad_passthrough_value_creates_no_topic(kafka_bootstrap, namespace):
    result = _forwarder(kafka_bootstrap, namespace, "-X", "fetch.wait.max.ms=soon")
    assert result.exit_code == EXIT_USAGE
    assert result.stderr.count("\n") == 1
    assert "fetch.wait.max.ms" in result.stderr
    assert _topics(kafka_bootstrap, namespace) == []


def test_spool_resend_names_unreadable_files_and_exits_1(kafka_bootstrap, namespace, tmp_path):
    (tmp_path / "000000000000001-bad.json").write_text("{not json")
    result = CliRunner().invoke(
        main,
        [
            "--bootstrap-servers",
            kafka_bootstrap,
            "--namespace",
            namespace,
            "spool",
            "resend",
            "--dir",
            str(tmp_path),
        ],
    )
    assert "000000000000001-bad.json" in result.stderr
    assert "unreadable=1" in result.stdout
    assert result.exit_code == 1
