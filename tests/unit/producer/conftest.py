"""Each send future implementation, for the tests of the future contract they all keep."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from compiled_core import compiled_core

from rmqcompat.message import Message
from rmqcompat.producer.pending import PendingSend
from rmqcompat.producer.send_future import OutcomeCallback, SendFuture

#: Makes a future that is still running: ``new_future(on_outcome=None)``.
NewFuture = Callable[..., SendFuture]


def _compiled_pending_send() -> type[Any]:
    return compiled_core().PendingSend  # type: ignore[no-any-return]


def _pending(kind: type[Any]) -> NewFuture:
    def make(on_outcome: OutcomeCallback | None = None) -> SendFuture:
        send: SendFuture = kind(
            "rmq.T", b"body", None, {}, "ID1", "T", Message("T", b"body"), 3, on_outcome=on_outcome
        )
        return send

    return make


@pytest.fixture
def compiled_pending_send() -> type[PendingSend]:
    """The core's ``PendingSend``."""
    return _compiled_pending_send()


@pytest.fixture(params=["PendingSend", "compiled PendingSend"])
def pending_send(request: pytest.FixtureRequest) -> type[PendingSend]:
    """Each ``PendingSend``: the Python class and the core's."""
    return PendingSend if request.param == "PendingSend" else _compiled_pending_send()


@pytest.fixture(params=["SendFuture", "PendingSend", "compiled PendingSend"])
def new_future(request: pytest.FixtureRequest) -> NewFuture:
    if request.param == "SendFuture":
        return SendFuture
    if request.param == "PendingSend":
        return _pending(PendingSend)
    return _pending(_compiled_pending_send())
