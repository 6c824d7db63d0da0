"""The ``rocketmq`` import name: rmqcompat in place of Apache RocketMQ's Python clients.

Two ways to get it: install the ``rmqcompat-rocketmq`` distribution (folder
``rocketmq/`` of this repository), or call :func:`install_as_rocketmq` first thing in a
process whose environment cannot change (PyMySQL's ``install_as_MySQLdb()`` idea).
Either way ``from rocketmq import Producer, SimpleConsumer, ...`` gives the 5.x surface
(:mod:`rmqcompat.v5`) and ``from rocketmq.client import Producer, PushConsumer,
Message`` the 4.x drop-in (:mod:`rmqcompat.client`).

The real clients install the same import name: ``rocketmq-python-client`` (5.x) and
``rocketmq-client-python`` (4.x). Beside one of them the shim would shadow it, or be
shadowed, depending on install order; so :func:`upstream_distribution` looks for them
and the shim refuses to load (ImportError), :func:`install_as_rocketmq` refuses too,
each with one message naming the distribution found and what to do.
"""

from __future__ import annotations

import importlib
import sys
from importlib import metadata

#: The distributions of Apache RocketMQ's Python clients that own the ``rocketmq`` name.
UPSTREAM_DISTRIBUTIONS = ("rocketmq-python-client", "rocketmq-client-python")

#: ``rocketmq`` module -> the rmqcompat module that stands in for it: the 5.x names at
#: the top and where upstream's examples import them from (``rocketmq.v5.consumer``,
#: ``rocketmq.v5.consumer.message_listener``, ...), and the 4.x drop-in's modules.
MODULES = {
    "rocketmq": "rmqcompat.v5",
    "rocketmq.v5": "rmqcompat.v5",
    "rocketmq.v5.client": "rmqcompat.v5.config",
    "rocketmq.v5.consumer": "rmqcompat.v5",
    "rocketmq.v5.consumer.message_listener": "rmqcompat.v5.push",
    "rocketmq.v5.exception": "rmqcompat.v5.exceptions",
    "rocketmq.v5.model": "rmqcompat.v5",
    "rocketmq.v5.producer": "rmqcompat.v5",
    "rocketmq.client": "rmqcompat.client",
    "rocketmq.exceptions": "rmqcompat.exceptions",
    "rocketmq.consts": "rmqcompat.consts",
}


class UpstreamRocketMQError(ImportError):
    """An Apache RocketMQ Python client is installed where the shim would take its name."""


def upstream_distribution() -> str | None:
    """``"name version"`` of an installed upstream client, or None."""
    for name in UPSTREAM_DISTRIBUTIONS:
        try:
            return f"{name} {metadata.version(name)}"
        except metadata.PackageNotFoundError:
            continue
    return None


def refuse_upstream() -> None:
    """Raise :class:`UpstreamRocketMQError` if an upstream client is installed."""
    found = upstream_distribution()
    if found is not None:
        raise UpstreamRocketMQError(
            f"{found} is installed in this environment and owns the 'rocketmq' import "
            "name too, so rmqcompat's shim and it would shadow each other; uninstall one "
            f"of them (pip uninstall {found.split()[0]} or pip uninstall rmqcompat-rocketmq)"
        )


def install_as_rocketmq() -> None:
    """Make ``import rocketmq`` (and ``rocketmq.client``, ``.exceptions``, ``.consts``)
    give rmqcompat in this process.

    Raises:
        UpstreamRocketMQError: an upstream client is installed, or a module named
            ``rocketmq`` other than rmqcompat's was already imported.
    """
    loaded = sys.modules.get("rocketmq")
    if loaded is not None and not getattr(loaded, "RMQCOMPAT_SHIM", False):
        raise UpstreamRocketMQError(f"a module 'rocketmq' is already imported: {loaded!r}")
    refuse_upstream()
    sys.modules["rocketmq"] = importlib.import_module(MODULES["rocketmq"])
    alias_submodules()


def alias_submodules() -> None:
    """Register the ``rocketmq.*`` submodules of :data:`MODULES` (the shim package
    calls this for its submodules; it is the ``rocketmq`` package itself)."""
    for name, target in MODULES.items():
        if name != "rocketmq":
            sys.modules[name] = importlib.import_module(target)
