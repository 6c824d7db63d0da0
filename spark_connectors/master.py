"""Spark master URLs: the ones Spark accepts, and a local master's threads.

Imports nothing of pyspark (nor does the package's ``__init__``), so that the CLI can refuse a bad
``--master`` before it starts a JVM, whose refusal would come with a Java stack trace.
"""

from __future__ import annotations

import os
import re

from rmqcompat.errors import ConfigError

_LOCAL = re.compile(r"local(?:\[([1-9]\d*|\*)(?:,\s*\d+)?\])?")
#: One master of a standalone cluster's ``spark://`` URL: a host name, IPv4 or bracketed
#: IPv6 address, and a port (a URL lists several masters of one cluster, comma-separated).
_STANDALONE_MASTER = re.compile(r"(?:[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\]):([1-9]\d{0,4})")


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
        ConfigError: ``master`` is not ``yarn``, ``spark://HOST:PORT[,HOST:PORT...]``,
            ``k8s://...``, ``local-cluster[...]`` or a local master of one thread or more.
    """
    if master == "yarn" or master.startswith(("k8s://", "local-cluster[")):
        return master
    if master.startswith("spark://"):
        if _standalone(master.removeprefix("spark://")):
            return master
    elif local_threads(master) is not None:
        return master
    raise ConfigError(
        f"{master!r} is not a Spark master: local, local[N], local[*], local[N,F],"
        " spark://HOST:PORT (a standalone cluster's; more masters comma-separated),"
        " k8s://... or yarn"
    )


def _standalone(addresses: str) -> bool:
    """Whether ``addresses`` (a ``spark://`` URL without its scheme) names one or more
    masters as ``HOST:PORT``, each port at most 65535."""
    for address in addresses.split(","):
        match = _STANDALONE_MASTER.fullmatch(address)
        if match is None or int(match.group(1)) > 65535:
            return False
    return True
