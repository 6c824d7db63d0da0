"""A broker's environment is read safely while other threads change ours."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from rmqcompat.devbroker.environment import environment_without

_FLICKERING = "RMQCOMPAT_TEST_FLICKERING"


def test_the_hidden_variables_are_left_out_and_the_rest_kept(monkeypatch):
    monkeypatch.setenv("RMQCOMPAT_TEST_KEPT", "1")
    monkeypatch.setenv("RMQCOMPAT_TEST_HIDDEN", "2")
    environment = environment_without(("RMQCOMPAT_TEST_HIDDEN",))
    assert environment["RMQCOMPAT_TEST_KEPT"] == "1"
    assert "RMQCOMPAT_TEST_HIDDEN" not in environment
    assert environment == {k: v for k, v in os.environ.items() if k != "RMQCOMPAT_TEST_HIDDEN"}


@pytest.fixture
def flickering_variable():
    """Another thread sets and removes a variable as fast as it can, as pytest does with
    ``PYTEST_CURRENT_TEST`` around every test; thread switches every microsecond make a
    removal between listing the names and reading them likely."""
    stop = threading.Event()

    def flicker() -> None:
        while not stop.is_set():
            os.environ[_FLICKERING] = "x"
            os.environ.pop(_FLICKERING, None)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    thread = threading.Thread(target=flicker, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
        os.environ.pop(_FLICKERING, None)


@pytest.mark.usefixtures("flickering_variable")
def test_a_variable_removed_meanwhile_is_left_out_not_raised():
    for _ in range(5_000):
        environment = environment_without(())
        assert environment.get(_FLICKERING, "x") == "x"
