"""The environment a broker process (or a Kafka tool) inherits."""

from __future__ import annotations

import os
from collections.abc import Collection


def environment_without(hidden: Collection[str]) -> dict[str, str]:
    """This process's environment without the ``hidden`` variables.

    Safe while other threads set and unset variables (pytest sets and removes
    ``PYTEST_CURRENT_TEST`` around every test while a scenario's thread starts a Kafka
    tool): ``os.environ.items()`` looks each name up again after listing them, and a name
    removed in between raised ``KeyError``. The names are listed in one step here, and one
    gone by the time it is read is left out.
    """
    environment: dict[str, str] = {}
    for name in list(os.environ):  # one snapshot of the names
        value = os.environ.get(name)
        if value is not None and name not in hidden:
            environment[name] = value
    return environment
