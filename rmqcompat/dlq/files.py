"""Dead letters in files: JSON Lines or an Avro container file, chosen by extension.

Both hold every dead letter completely: group, DLQ position, dead-letter time, key, body
and the headers byte for byte (JSON Lines: base64; a header without a value is null).
The derived fields (message ids, original topic, tags, keys, reconsume count, born time)
are written for people to read and ignored when reading back: the headers decide, so an
edited header changes what a replay sends.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import fastavro

from rmqcompat.dlq.model import DeadLetter
from rmqcompat.errors import ConfigError

_AVRO_EXTENSIONS = (".avro",)
_JSONL_EXTENSIONS = (".jsonl", ".ndjson", ".json")
_NULLABLE_BYTES = ["null", "bytes"]
_NULLABLE_STRING = ["null", "string"]
AVRO_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "DeadLetter",
    "namespace": "rmqcompat.dlq",
    "fields": [
        {"name": "group", "type": "string"},
        {"name": "dlq_topic", "type": "string"},
        {"name": "partition", "type": "int"},
        {"name": "offset", "type": "long"},
        {"name": "dead_ms", "type": "long"},
        {"name": "key", "type": _NULLABLE_BYTES},
        {"name": "body", "type": "bytes"},
        {
            "name": "headers",
            "type": {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "Header",
                    "fields": [
                        {"name": "name", "type": "string"},
                        {"name": "value", "type": _NULLABLE_BYTES},
                    ],
                },
            },
        },
        {"name": "msg_id", "type": "string"},
        {"name": "origin_msg_id", "type": "string"},
        {"name": "original_topic", "type": "string"},
        {"name": "tags", "type": _NULLABLE_STRING},
        {"name": "reconsume_times", "type": "int"},
        {"name": "born_ms", "type": "long"},
    ],
}
_PARSED_SCHEMA = fastavro.parse_schema(AVRO_SCHEMA)


def file_format(path: Path) -> str:
    """``"avro"`` or ``"jsonl"`` by the file's extension.

    Raises:
        ConfigError: the extension is neither.
    """
    suffix = path.suffix.lower()
    if suffix in _AVRO_EXTENSIONS:
        return "avro"
    if suffix in _JSONL_EXTENSIONS:
        return "jsonl"
    raise ConfigError(
        f"{path}: unknown file type {suffix or '(none)'!r}; use .jsonl (JSON Lines) or .avro"
    )


def _avro_row(letter: DeadLetter) -> dict[str, Any]:
    return {
        "group": letter.group,
        "dlq_topic": letter.dlq_topic,
        "partition": letter.partition,
        "offset": letter.offset,
        "dead_ms": letter.dead_ms,
        "key": letter.key,
        "body": letter.body,
        "headers": [{"name": name, "value": value} for name, value in letter.headers],
        "msg_id": letter.msg_id,
        "origin_msg_id": letter.origin_msg_id,
        "original_topic": letter.original_topic,
        "tags": letter.tags,
        "reconsume_times": letter.reconsume_times,
        "born_ms": letter.born_ms,
    }


def _from_row(row: dict[str, Any]) -> DeadLetter:
    return DeadLetter(
        group=row["group"],
        dlq_topic=row["dlq_topic"],
        partition=row["partition"],
        offset=row["offset"],
        dead_ms=row["dead_ms"],
        body=row["body"],
        key=row["key"],
        headers=tuple((header["name"], header["value"]) for header in row["headers"]),
    )


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def _unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text, validate=True)


def _json_line(letter: DeadLetter) -> str:
    row = _avro_row(letter)
    row["key"], row["body"] = _b64(letter.key), _b64(letter.body)
    row["headers"] = [{"name": n, "value": _b64(v)} for n, v in letter.headers]
    return json.dumps(row, sort_keys=True)


def _from_json_line(line: str) -> DeadLetter:
    row = json.loads(line)
    row["key"], row["body"] = _unb64(row["key"]), _unb64(row["body"]) or b""
    row["headers"] = [{"name": h["name"], "value": _unb64(h["value"])} for h in row["headers"]]
    return _from_row(row)


def write_dead_letters(path: Path, letters: Iterable[DeadLetter]) -> int:
    """Write ``letters`` to ``path`` (format by extension); returns how many.

    The file appears only once complete: a failure part way (the broker, the disk) leaves
    no file, and an existing one untouched.

    Raises:
        ConfigError: unknown extension (checked before the file is created).
        OSError: the file cannot be written.
    """
    kind = file_format(path)
    count = 0

    def counted() -> Iterator[DeadLetter]:
        nonlocal count
        for letter in letters:
            count += 1
            yield letter

    partial = path.with_name(path.name + ".part")
    try:
        if kind == "avro":
            with partial.open("wb") as out:
                fastavro.writer(out, _PARSED_SCHEMA, (_avro_row(item) for item in counted()))
        else:
            with partial.open("w", encoding="utf-8") as text:
                for letter in counted():
                    text.write(_json_line(letter) + "\n")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return count


def read_dead_letters_file(path: Path) -> list[DeadLetter]:
    """Every dead letter of an exported (maybe edited) file.

    Raises:
        ConfigError: unknown extension, or a line/record that is not a dead letter (the
            message names the line).
        OSError: the file cannot be read.
    """
    if file_format(path) == "avro":
        with path.open("rb") as data:
            try:
                return [_from_row(row) for row in fastavro.reader(data)]  # type: ignore[arg-type]
            except (ValueError, KeyError, TypeError, EOFError) as exc:
                raise ConfigError(f"{path}: not a dead-letter Avro file ({exc})") from None
    letters = []
    with path.open(encoding="utf-8") as text:
        for number, line in enumerate(text, start=1):
            if not line.strip():
                continue
            try:
                letters.append(_from_json_line(line))
            except (ValueError, KeyError, TypeError) as exc:
                raise ConfigError(f"{path}:{number}: not a dead letter ({exc!r})") from None
    return letters
