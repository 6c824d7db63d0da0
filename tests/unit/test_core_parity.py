"""The compiled core against its pure-Python reference: the same inputs, the same results.

Every function of ``rmqcompat._core`` has a Python counterpart (``rmqcompat.core``); these
tests run generated inputs, well-formed and not, through both and require the same
outcome, value or exception. The core is imported directly, so they run also where
``RMQCOMPAT_PURE_PYTHON`` switches it off for the rest of the suite; where it is not built
they are skipped, except in CI, which builds it.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from types import ModuleType
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rmqcompat import wire
from rmqcompat.core import PURE_PYTHON_ENV


def _compiled() -> ModuleType:
    try:
        return importlib.import_module("rmqcompat._core")
    except ImportError:
        if os.environ.get("CI"):
            raise AssertionError("CI installs the compiled core: it must import") from None
        pytest.skip("the compiled core is not built here (no Rust toolchain at install time)")


NAMES = st.sampled_from(["UNIQ_KEY", "TAGS", "KEYS", "a", "ü", ""]) | st.text(max_size=6)
VALUES = (
    st.binary(max_size=12)  # often not UTF-8
    | st.text(max_size=12).map(lambda t: t.encode("utf-8", "surrogatepass"))
    | st.none()
    | st.builds(bytearray, st.binary(max_size=4))
    | st.text(max_size=4)  # a str value: not bytes
)
PAIRS = st.tuples(NAMES, VALUES)
ODD = st.tuples(NAMES) | st.tuples(NAMES, VALUES, VALUES) | st.lists(VALUES, max_size=2)
HEADERS = (
    st.lists(PAIRS, max_size=8)
    | st.lists(PAIRS | ODD, max_size=4)
    | st.lists(PAIRS, max_size=4).map(tuple)
    | st.none()
)


def _outcome(fast: Any, headers: Any) -> tuple[Any, ...]:
    with mock.patch.object(wire, "_decode_well_formed", fast):
        try:
            return ("value", wire.decode_properties(headers))
        except Exception as exc:  # the exception is the outcome compared
            return ("raised", type(exc), str(exc))


@given(HEADERS)
def test_header_decoding_is_the_same_compiled_and_pure(headers: Any) -> None:
    core = _compiled()
    assert core.decode_headers(headers) == wire.decode_well_formed(headers)
    assert _outcome(core.decode_headers, headers) == _outcome(wire.decode_well_formed, headers)


def test_well_formed_headers_are_decoded_by_the_core_itself() -> None:
    """The core takes the common case itself (None would send it to the Python codec)."""
    core = _compiled()
    headers = [("UNIQ_KEY", b"id-1"), ("TAGS", "ü".encode())]
    assert core.decode_headers(headers) == {"UNIQ_KEY": "id-1", "TAGS": "ü"}
    for odd in ([("a", None)], [("a", b"\xff")], [("a", b"1"), ("a", b"2")], (("a", b"1"),)):
        assert core.decode_headers(odd) is None


def _implementation(env: dict[str, str]) -> str:
    code = (
        "from rmqcompat import core, wire; print(core.implementation(), wire._decode_well_formed)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_the_environment_variable_forces_the_pure_path() -> None:
    _compiled()
    env = {k: v for k, v in os.environ.items() if k != PURE_PYTHON_ENV}
    assert _implementation(env).startswith("compiled core <built-in function decode_headers>")
    forced = _implementation({**env, PURE_PYTHON_ENV: "1"})
    assert forced.startswith(f"pure Python ({PURE_PYTHON_ENV} is set) <function decode_well_formed")
