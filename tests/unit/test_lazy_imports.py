"""Top-level exports are lazy: light modules load no Kafka client, metrics or services."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

import rmqcompat

HEAVY = (
    "confluent_kafka",
    "prometheus_client",
    "rmqcompat.producer",
    "rmqcompat.consumer",
    "rmqcompat.forwarder",
)


def _loaded_after(statement: str) -> list[str]:
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    return [
        m
        for m in json.loads(out)
        if any(m == heavy or m.startswith(f"{heavy}.") for heavy in HEAVY)
    ]


@pytest.mark.parametrize(
    "statement",
    ["import rmqcompat.topics.naming", "import rmqcompat", "from rmqcompat import topics"],
)
def test_light_imports_load_no_heavy_module(statement: str) -> None:
    assert _loaded_after(statement) == []


def test_every_public_name_imports_from_the_top_level() -> None:
    for name in rmqcompat.__all__:
        value = getattr(importlib.import_module("rmqcompat"), name)
        assert value.__name__ == name
    assert set(rmqcompat.__all__) <= set(dir(rmqcompat))


def test_star_import_and_from_import_work_in_a_fresh_interpreter() -> None:
    code = (
        "from rmqcompat import *\n"
        "from rmqcompat import DefaultMQProducer, DefaultMQPushConsumer, DelayForwarder\n"
        "import rmqcompat\n"
        "assert all(name in globals() for name in rmqcompat.__all__)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_newer_errors_are_exported() -> None:
    from rmqcompat import BrokerUnreachableError, InvalidMessageError, RmqCompatError

    assert issubclass(BrokerUnreachableError, RmqCompatError)
    assert issubclass(InvalidMessageError, RmqCompatError)


def test_unknown_name_raises_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        rmqcompat.no_such_name  # noqa: B018
