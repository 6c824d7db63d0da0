"""The fault tests' shared fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module", autouse=True)
def _audit_spark_stopped() -> Iterator[None]:
    """Stops the Spark session of the module's trace audits (``audit_checker``), if one ran:
    a module's audits share it, the next module's tests do not need it."""
    yield
    from audit_checker import AUDITOR  # imports pyspark: only once a module is done

    AUDITOR.stop()
