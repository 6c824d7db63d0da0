"""The compiled core for the tests that hold it to its pure-Python counterparts."""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest


def compiled_core() -> ModuleType:
    """``rmqcompat._core``, imported directly (so also where ``RMQCOMPAT_PURE_PYTHON`` is
    set); skips the test where it is not built, except in CI, which builds it."""
    try:
        return importlib.import_module("rmqcompat._core")
    except ImportError:
        if os.environ.get("CI"):
            raise AssertionError("CI installs the compiled core: it must import") from None
        pytest.skip("the compiled core is not built here (no Rust toolchain at install time)")
