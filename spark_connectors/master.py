"""Spark master URLs: the ones Spark accepts, and a local master's threads.

Imports nothing of pyspark (nor does the package's ``__init__``), so that the CLI can refuse a bad
``--master`` before it starts a JVM, whose refusal would come with a Java stack trace.
"""

from __future__ import annotations

import os
import re

from rmqcompat.errors import ConfigError

_LOCAL = re.compile(r"local(?:\[([1-9]\d*|\*)(?:,\s*\d+)?\])?")


def local_threads(master: str) -> int | None:
    """The worker threads of a ``local``, ``local[N]``, ``local[*]`` or ``local[N,F]``
    master; None for any other master (a cluster sizes itself)."""
    match = _LOCAL.fullmatch(master)
    if match is None:
        return None
    threads = match.group(1)
    if threads is None:  # "local": one thread
        return 1
    return os.cpu_count() or 1 if threads == "*" else int(threads)


def check_master(master: str) -> str:
    """``master``, unless it is a URL Spark would not start with.

    Raises:
        ConfigError: ``master`` is not ``yarn``, ``spark://...``, ``k8s://...``,
            ``local-cluster[...]`` or a local master of one thread or more.
    """
    if master == "yarn" or master.startswith(("spark://", "k8s://", "local-cluster[")):
        return master
    if local_threads(master) is None:
        raise ConfigError(
            f"{master!r} is not a Spark master: local, local[N], local[*], local[N,F],"
            " spark://..., k8s://... or yarn"
        )
    return master
