"""Provisioning against a broker that does not answer waits out one timeout, not two."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import KafkaException

from rmqcompat.topics import provision
from rmqcompat.topics.spec import TopicSpec

TIMEOUT_S = 1.0


def test_an_unreachable_broker_fails_after_one_admin_timeout(monkeypatch):
    """The request naming the topics timed out: the whole list is read within what is
    left of the one timeout, not a timeout of its own."""
    monkeypatch.setattr(provision, "ADMIN_TIMEOUT_S", TIMEOUT_S)
    started = time.monotonic()
    with pytest.raises(KafkaException):
        provision.ensure_topics({"bootstrap.servers": "127.0.0.1:1"}, {"T": TopicSpec(1)})
    assert time.monotonic() - started < 1.8 * TIMEOUT_S
