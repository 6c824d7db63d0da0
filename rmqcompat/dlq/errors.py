"""Errors of the dead-letter tools (part of the :class:`rmqcompat.errors.RmqCompatError` tree)."""

from __future__ import annotations

from rmqcompat.errors import ConfigError, RmqCompatError


class UnknownGroupError(RmqCompatError):
    """The group has no dead-letter topic in the namespace (never dead-lettered, or a typo)."""


class BadTimeError(ConfigError):
    """A time option is neither an ISO-8601 time nor a relative age such as ``2h``."""
