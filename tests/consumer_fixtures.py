"""The ``env`` fixture of the push-consumer tests (a fresh group and a created topic).

A test module uses it by importing it: ``from consumer_fixtures import consumer_env``.
"""

from __future__ import annotations

import pytest
from consumer_helpers import ConsumerEnv, new_env


@pytest.fixture(name="env")
def consumer_env(kafka_bootstrap, client_overrides, namespace, unique_name) -> ConsumerEnv:
    return new_env(kafka_bootstrap, client_overrides, namespace, unique_name)
