"""How long ``DevBroker.start`` waits for a broker that never answers."""

from __future__ import annotations

import sys
import time
from dataclasses import replace

import pytest

from rmqcompat.devbroker import DevBroker
from rmqcompat.devbroker.errors import DevBrokerError


def _silent(host: str, port: int, data_dir: object) -> list[str]:
    """A process that runs but never listens: a broker that is slow to start."""
    return [sys.executable, "-c", "import time; time.sleep(60)"]


@pytest.mark.parametrize("timeout_s", [0.3, 0])  # zero too: taken as given, not as "none"
def test_start_waits_the_timeout_it_is_given_instead_of_the_kinds(timeout_s: float):
    broker = DevBroker(kind="tansu")
    broker._flavour = replace(broker._flavour, launch=_silent, start_timeout_s=60.0)
    started = time.monotonic()
    with pytest.raises(DevBrokerError, match=r"did not accept connections .* within 0 s"):
        broker.start(timeout_s=timeout_s)
    assert time.monotonic() - started < 30  # not the kind's 60 s
    assert broker._process is None  # stopped on the way out
