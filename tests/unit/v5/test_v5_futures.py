"""``*_async`` calls: the blocking twin on a helper thread."""

from __future__ import annotations

import threading

import pytest

from rmqcompat.v5.futures import in_thread


def test_the_future_gets_the_result_from_another_thread():
    assert in_thread(threading.current_thread, "t").result(5).name == "t"


def test_the_future_gets_the_error():
    def fail() -> None:
        raise ValueError("bad")

    with pytest.raises(ValueError, match="bad"):
        in_thread(fail, "t").result(5)
