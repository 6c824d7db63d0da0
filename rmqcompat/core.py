"""Which implementation runs the per-message hot paths: the compiled core or pure Python.

The compiled core (``rmqcompat._core``, Rust with PyO3, built from ``native/`` by a normal
``pip install`` where a Rust toolchain is present) is optional: without it, or with
``RMQCOMPAT_PURE_PYTHON=1`` in the environment, every path runs in pure Python, which
stays the reference implementation. Each compiled function has a Python counterpart, and
the tests run the same inputs through both (``tests/unit/test_core_parity.py``).
``rmqcompat --version`` says which one is active.
"""

from __future__ import annotations

import os
from types import ModuleType

#: Set to anything but ``""`` or ``"0"``: run pure Python even where the core is built.
PURE_PYTHON_ENV = "RMQCOMPAT_PURE_PYTHON"


def _pure_forced() -> bool:
    return os.environ.get(PURE_PYTHON_ENV, "").strip() not in ("", "0")


def _load() -> ModuleType | None:
    if _pure_forced():
        return None
    try:
        from rmqcompat import _core
    except ImportError:  # not built here (no Rust toolchain at install time)
        return None
    return _core


#: The compiled core, or None when pure Python runs (read once, at import).
CORE = _load()

#: What a bug raises, for the threads that must outlive one: any exception, and a panic
#: of the compiled core, whose ``PanicException`` derives from ``BaseException`` (as
#: PyO3 raises it), so that ``except Exception`` alone lets it end the thread.
BUG_ERRORS: tuple[type[BaseException], ...] = (
    (Exception,) if CORE is None else (Exception, CORE.PanicException)
)


def implementation() -> str:
    """``"compiled core"`` or ``"pure Python"``, with the reason for the latter."""
    if CORE is not None:
        return "compiled core"
    if _pure_forced():
        return f"pure Python ({PURE_PYTHON_ENV} is set)"
    return "pure Python (the compiled core is not built)"
