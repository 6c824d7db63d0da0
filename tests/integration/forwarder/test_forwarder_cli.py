"""``rmqcompat forwarder run`` as a subprocess: forwards a record and exits 0 on SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import sys
import urllib.request

from forwarder_helpers import create_topics, park_many, read
from waiting import wait_until

from rmqcompat.cli.main import main
from rmqcompat.devbroker import free_port
from rmqcompat.topics.delay_levels import DelayLevels
from rmqcompat.topics.spec import TopicSpec

TABLE = "100ms 200ms"

# Until cli/main.py registers the group, run it directly under the same global options.
_DIRECT = (
    "import sys; from rmqcompat.cli.context import CliContext; "
    "from rmqcompat.cli.forwarder_cmd import forwarder; "
    "forwarder(sys.argv[3:], obj=CliContext(sys.argv[1], sys.argv[2]))"
)


def forwarder_command(bootstrap: str, namespace: str, *args: str) -> list[str]:
    if "forwarder" in main.commands:
        return [sys.executable, "-m", "rmqcompat.cli.main", "--bootstrap-servers", bootstrap,
                "--namespace", namespace, "forwarder", *args]  # fmt: skip
    return [sys.executable, "-c", _DIRECT, bootstrap, namespace, *args]


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as reply:
            return reply.status == 200
    except OSError:
        return False


def test_cli_forwards_and_exits_cleanly_on_sigterm(kafka_bootstrap, namespace, client_overrides):
    create_topics(kafka_bootstrap, namespace, {"Orders": TopicSpec(1)})
    port = free_port()
    passthrough = [arg for k, v in client_overrides.items() for arg in ("-X", f"{k}={v}")]
    args = ["run", "--message-delay-level", TABLE, "--metrics-port", str(port), *passthrough]
    proc = subprocess.Popen(forwarder_command(kafka_bootstrap, namespace, *args))
    try:
        wait_until(lambda: _healthy(port) or proc.poll() is not None, what="the forwarder to run")
        assert proc.poll() is None
        park_many(
            kafka_bootstrap,
            namespace,
            DelayLevels.parse(TABLE),
            [{"value": b"via-cli", "level": 1, "real_topic": "Orders"}],
        )
        (msg,) = read(kafka_bootstrap, f"{namespace}.Orders", client_overrides, count=1)
        assert msg.value() == b"via-cli"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_cli_rejects_bad_passthrough_before_connecting(kafka_bootstrap, namespace):
    cmd = forwarder_command(kafka_bootstrap, namespace, "run", "-X", "no-equals-sign")
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "is not key=value" in result.stderr
