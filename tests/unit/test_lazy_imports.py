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


def _loaded_after(statement: str, watched: tuple[str, ...] = HEAVY) -> list[str]:
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    return [
        m for m in json.loads(out) if any(m == name or m.startswith(f"{name}.") for name in watched)
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


@pytest.mark.parametrize(
    "statement",
    [
        "import rmqcompat",
        "import rmqcompat.spark",
        "from rmqcompat.spark.master import check_master",
    ],
)
def test_the_spark_package_loads_no_spark_until_a_name_of_it_is_used(statement: str) -> None:
    assert _loaded_after(statement, ("pyspark", "py4j")) == []


def test_the_audit_imports_neither_consumer_internals_nor_the_dev_brokers() -> None:
    # everything `rmqcompat audit` runs (pyspark is a dev dependency of the test suite)
    statement = "import rmqcompat.spark.run, rmqcompat.spark.lag, rmqcompat.cli.audit_cmd"
    watched = ("rmqcompat.consumer", "rmqcompat.devbroker")
    assert _loaded_after(statement, watched) == []


def test_the_spark_packages_names_import_on_first_use() -> None:
    import rmqcompat.spark as spark

    for name in spark.__all__:
        assert getattr(spark, name) is not None
    with pytest.raises(AttributeError, match="no_such_name"):
        spark.no_such_name  # noqa: B018
