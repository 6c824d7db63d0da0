"""The settings that load the compiled core as a librdkafka plugin
(``rmqcompat.core_plugin``), and which clients use it: a replay hands its records over
through the core only where the core took its producer."""

from __future__ import annotations

import pytest
from confluent_kafka import Producer

from rmqcompat import core_plugin
from rmqcompat.core import CORE
from rmqcompat.core_plugin import (
    PLUGIN_PROPERTY,
    TOKEN_PROPERTY,
    plugin_config,
    plugin_token,
    with_plugin,
)
from rmqcompat.dlq.transactions import hand_over, produce_all, produce_directly

UNREACHABLE = {"bootstrap.servers": "127.0.0.1:1"}  # a client is created, never used
needs_core = pytest.mark.skipif(CORE is None, reason="the plugin is the compiled core")


def test_the_users_own_plugins_turn_the_plugin_off():
    assert plugin_config({PLUGIN_PROPERTY: "/opt/theirs.so"}) == {}


def test_without_the_core_nothing_is_added(monkeypatch):
    monkeypatch.setattr(core_plugin, "CORE", None)
    assert with_plugin(dict(UNREACHABLE)) == UNREACHABLE
    assert plugin_token({TOKEN_PROPERTY: "t"}) is None


@needs_core
def test_the_plugin_comes_first_and_each_client_has_its_own_token():
    first, second = with_plugin(dict(UNREACHABLE)), with_plugin(dict(UNREACHABLE))
    assert list(first)[:2] == [PLUGIN_PROPERTY, TOKEN_PROPERTY]
    assert first[PLUGIN_PROPERTY] == CORE.__file__
    assert plugin_token(first) != plugin_token(second)


@needs_core
def test_a_producer_the_core_took_hands_records_over_through_it():
    settings = with_plugin(dict(UNREACHABLE))
    producer = Producer(settings)
    assert hand_over(producer, settings).func is produce_directly  # type: ignore[attr-defined]


def test_elsewhere_one_produce_call_a_record(monkeypatch):
    producer = Producer(dict(UNREACHABLE))
    assert hand_over(producer, dict(UNREACHABLE)).func is produce_all  # type: ignore[attr-defined]
    settings = with_plugin(dict(UNREACHABLE))
    monkeypatch.setattr(core_plugin, "CORE", None)  # the pure path ignores a token
    assert hand_over(Producer(settings), settings).func is produce_all  # type: ignore[attr-defined]
