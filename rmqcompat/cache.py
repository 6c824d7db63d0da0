"""Where rmqcompat keeps what it fetches or builds once per machine: Apache Kafka's jars,
Spark's Ivy cache and class archive."""

from __future__ import annotations

import os
from pathlib import Path

#: Moves the cache away from ``~/.cache/rmqcompat``.
CACHE_DIR_ENV = "RMQCOMPAT_CACHE_DIR"


def cache_root() -> Path:
    """``$RMQCOMPAT_CACHE_DIR``, else ``$XDG_CACHE_HOME/rmqcompat``, else
    ``~/.cache/rmqcompat``."""
    configured = os.environ.get(CACHE_DIR_ENV)
    if configured:
        return Path(configured)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "rmqcompat"
