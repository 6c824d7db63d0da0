"""The ``rocketmq`` import name: the shim package and install_as_rocketmq(), each run in
a fresh interpreter, with and without an upstream client's metadata beside them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SHIM = Path(__file__).resolve().parents[3] / "rocketmq"

IMPORTS = """
from rocketmq import (ClientConfiguration, ConsumeResult, Credentials, FilterExpression,
    Message, MessageListener, Producer, PushConsumer, SendReceipt, SimpleConsumer,
    Transaction, TransactionChecker, TransactionResolution)
from rocketmq.client import Message as Message4, Producer as Producer4, PushConsumer as Push4
from rocketmq.client import ConsumeStatus, TransactionMQProducer
from rocketmq.exceptions import ProducerSendSyncFailed
from rocketmq.v5.consumer import PushConsumer as Push5
from rocketmq.v5.consumer.message_listener import ConsumeResult as Result5
from rocketmq.v5.exception import BadRequestException, ClientException
assert Push5 is PushConsumer and Result5 is ConsumeResult
import rocketmq, rocketmq.client, rmqcompat.client, rmqcompat.v5
assert Producer is rmqcompat.v5.Producer and SimpleConsumer is rmqcompat.v5.SimpleConsumer
assert Producer4 is rmqcompat.client.Producer and Push4 is rmqcompat.client.PushConsumer
print(" ".join(sorted(rocketmq.__all__)))
"""

#: upstream 5.1.2's ``rocketmq.__all__`` without the lite consumers (not offered here)
UPSTREAM_ALL = {
    "Producer",
    "TransactionChecker",
    "Transaction",
    "TransactionResolution",
    "SimpleConsumer",
    "PushConsumer",
    "MessageListener",
    "ConsumeResult",
    "Message",
    "FilterExpression",
    "SendReceipt",
    "ClientConfiguration",
    "Credentials",
}


def _run(code: str, *path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in path)}
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )


def _fake_upstream(tmp_path: Path, name: str, version: str) -> Path:
    info = tmp_path / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    return tmp_path


def test_the_shim_package_serves_both_generations_of_imports():
    done = _run(IMPORTS, SHIM)
    assert done.returncode == 0, done.stderr
    assert set(done.stdout.split()) >= UPSTREAM_ALL


def test_install_as_rocketmq_serves_them_without_the_package():
    done = _run("import rmqcompat; rmqcompat.install_as_rocketmq()\n" + IMPORTS)
    assert done.returncode == 0, done.stderr
    assert set(done.stdout.split()) >= UPSTREAM_ALL


@pytest.mark.parametrize(
    ("name", "version"), [("rocketmq-python-client", "5.1.2"), ("rocketmq-client-python", "2.0.0")]
)
@pytest.mark.parametrize(
    "code", ["import rocketmq", "import rmqcompat; rmqcompat.install_as_rocketmq()"]
)
def test_an_upstream_client_beside_it_is_reported_in_one_message(tmp_path, name, version, code):
    done = _run(code, SHIM, _fake_upstream(tmp_path, name, version))
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("rmqcompat.v5.shim.UpstreamRocketMQError: ")
    assert f"{name} {version} is installed" in last and f"pip uninstall {name}" in last


def test_install_as_rocketmq_refuses_when_another_rocketmq_module_is_loaded():
    code = (
        "import sys, types\n"
        "sys.modules['rocketmq'] = types.ModuleType('rocketmq')\n"
        "import rmqcompat; rmqcompat.install_as_rocketmq()\n"
    )
    done = _run(code)
    assert done.returncode != 0 and "a module 'rocketmq' is already imported" in done.stderr
