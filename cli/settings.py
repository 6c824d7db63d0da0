"""Global client settings of the command line: ``-X key=value`` and ``--config FILE``.

A config file holds the same keys as ``-X`` (librdkafka names), as TOML (``key = value``
lines, or tables whose dotted paths are the names) or Java ``.properties``
(``key=value`` / ``key: value``, ``#`` and ``!`` comments). ``bootstrap.servers`` in the
file is used when neither ``--bootstrap-servers`` nor ``RMQCOMPAT_BOOTSTRAP_SERVERS`` is
set. ``-X`` wins over the file. Values are never echoed (secrets): errors name the key.
"""

from __future__ import annotations

import shlex
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rmqcompat.config import mask_secrets
from rmqcompat.errors import ConfigError

BOOTSTRAP_KEY = "bootstrap.servers"


def parse_passthrough(pairs: Sequence[str]) -> dict[str, str]:
    """``-X key=value`` options as a librdkafka settings dict.

    Raises:
        ConfigError: an option has no ``=`` or an empty key (its text is not shown).
    """
    settings: dict[str, str] = {}
    for number, pair in enumerate(pairs, start=1):
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            # without "=", the text may be a secret run into its key: never shown
            raise ConfigError(f"-X option number {number} is not key=value (text not shown)")
        settings[key.strip()] = value
    return settings


def load_config_file(path: Path) -> dict[str, str]:
    """The settings of a TOML (``.toml``) or properties (any other name) file.

    Raises:
        ConfigError: the file cannot be read or parsed (the message names the file and line).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"--config {path}: cannot read it ({exc})") from None
    if path.suffix.lower() == ".toml":
        try:
            return _flatten(tomllib.loads(text), "", path)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"--config {path}: not TOML ({exc})") from None
    return _properties(text, path)


def _flatten(table: Mapping[str, Any], prefix: str, path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in table.items():
        key = f"{prefix}{name}"
        if isinstance(value, Mapping):
            out.update(_flatten(value, key + ".", path))
        elif isinstance(value, bool):
            out[key] = "true" if value else "false"
        elif isinstance(value, str | int | float):
            out[key] = str(value)
        else:
            raise ConfigError(f"--config {path}: {key} must be a string, number or boolean")
    return out


def _properties(text: str, path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        cut = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        if cut <= 0:
            raise ConfigError(f"--config {path}:{number}: not key=value")
        out[line[:cut].strip()] = line[cut + 1 :].strip()
    return out


def masked_command(argv: Sequence[str]) -> str:
    """The command line with the value of every secret ``-X`` setting replaced by ``***``."""
    words = list(argv)
    for index, word in enumerate(words):
        pair = word[2:] if word.startswith("-X") and len(word) > 2 else None
        if pair is None and index > 0 and words[index - 1] == "-X":
            pair = word
        if pair is not None and "=" in pair:
            key, _, value = pair.partition("=")
            masked = f"{key}={mask_secrets({key: value})[key]}"
            words[index] = f"-X{masked}" if word.startswith("-X") else masked
    return shlex.join(words)
