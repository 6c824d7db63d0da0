"""The fault tests' shared fixtures."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module", autouse=True)
def _audit_spark_stopped() -> Iterator[None]:
    """Stops the Spark session of the module's trace audits (``audit_checker``), if one ran:
    a module's audits share it, the next module's tests do not need it."""
    yield
    checker = sys.modules.get("audit_checker")  # imported by the modules that audit
    if checker is not None:
        checker.AUDITOR.stop()
