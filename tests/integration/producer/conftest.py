"""Fixtures of the producer's integration tests."""

from __future__ import annotations

import pytest
from producer_helpers import create_topic


@pytest.fixture
def one_queue_topic(kafka_bootstrap, namespace, unique_name) -> str:
    """A new topic with one partition: its records keep the order they were written in."""
    name = unique_name("T")
    create_topic(kafka_bootstrap, name, namespace, partitions=1)
    return name
