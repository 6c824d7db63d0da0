"""Encode and decode trace events (Avro single-object encoding, see :mod:`.schema`)."""

from __future__ import annotations

import io
from typing import Any

from fastavro import schemaless_reader, schemaless_writer

from rmqcompat.errors import RmqCompatError
from rmqcompat.trace.schema import HEADER, HEADER_LENGTH, MAGIC, PARSED_SCHEMA

#: A trace event as fastavro reads and writes it: field name -> value.
TraceRecord = dict[str, Any]


class TraceDecodeError(RmqCompatError, ValueError):
    """A trace record is not single-object encoded with this version's schema."""


def encode(event: TraceRecord) -> bytes:
    """The single-object encoding of ``event`` (fields left out are null).

    Raises:
        ValueError: a field has the wrong type or a required field is missing (fastavro).
    """
    buffer = io.BytesIO()
    buffer.write(HEADER)
    schemaless_writer(buffer, PARSED_SCHEMA, event)
    return buffer.getvalue()


def decode(data: bytes) -> TraceRecord:
    """The event encoded in ``data``.

    Raises:
        TraceDecodeError: ``data`` lacks the single-object marker, was written with
            another schema (its fingerprint differs), or its body is not a valid event.
    """
    if data[: len(MAGIC)] != MAGIC:
        raise TraceDecodeError("not Avro single-object encoded (marker C3 01 missing)")
    if data[:HEADER_LENGTH] != HEADER:
        found = data[len(MAGIC) : HEADER_LENGTH].hex()
        raise TraceDecodeError(f"written with another trace schema (fingerprint {found})")
    try:
        record: TraceRecord = schemaless_reader(  # type: ignore[assignment]
            io.BytesIO(data[HEADER_LENGTH:]), PARSED_SCHEMA, None
        )
    except (EOFError, ValueError, IndexError, UnicodeDecodeError) as exc:
        raise TraceDecodeError(f"trace record body is not a valid event: {exc}") from None
    return record
