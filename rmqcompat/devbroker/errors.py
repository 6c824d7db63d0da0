"""Errors of the dev brokers."""

from __future__ import annotations

from rmqcompat.errors import RmqCompatError


class DevBrokerError(RmqCompatError):
    """The dev broker cannot be found, started or signalled."""


class DevBrokerUnavailableError(DevBrokerError):
    """What a dev broker kind runs on is missing here (a wheel, Java, Maven, the network).

    The message names what is missing and how to get it; callers that chose the kind
    themselves (the test fixture's default) may fall back to another kind.
    """
