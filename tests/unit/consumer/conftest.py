"""Fixtures of the consumer's unit tests."""

from __future__ import annotations

import pytest
from batch_kinds import KINDS, BatchKind
from batch_kinds import batch_kind as kind_named


@pytest.fixture(params=KINDS)
def batch_kind(request: pytest.FixtureRequest) -> BatchKind:
    """Each implementation of the batch and the context (:mod:`batch_kinds`)."""
    return kind_named(request.param)
