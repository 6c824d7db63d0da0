"""The trace schemas (``.avsc`` files shipped in the package) and their identities.

``trace_event.avsc`` is one event; ``trace_batch.avsc`` is what a trace record holds:
an array of events, each in its own single-object encoding. Trace records use Avro's
single-object encoding: the two marker bytes ``C3 01``, the schema's 8-byte
CRC-64-AVRO fingerprint (little-endian) of its parsing canonical form, then the Avro
binary body. A reader compares the ten header bytes with :data:`HEADER` (an event) or
:data:`BATCH_HEADER` (a batch) and so knows which schema version wrote a record.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from fastavro import parse_schema
from fastavro.schema import fingerprint, to_parsing_canonical_form

SCHEMA_FILE = "trace_event.avsc"
BATCH_SCHEMA_FILE = "trace_batch.avsc"
#: Avro's single-object encoding marker.
MAGIC = b"\xc3\x01"


def _text(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text("utf-8")


def _header(parsed: Any) -> bytes:
    """The single-object header of a parsed schema: the marker, then the CRC-64-AVRO of
    its parsing canonical form (fastavro's hex digits are the little-endian bytes)."""
    return MAGIC + bytes.fromhex(fingerprint(to_parsing_canonical_form(parsed), "CRC-64-AVRO"))


#: The event schema as JSON text, exactly as shipped (Spark's ``from_avro`` takes this).
SCHEMA_JSON: str = _text(SCHEMA_FILE)
SCHEMA: dict[str, Any] = json.loads(SCHEMA_JSON)
PARSED_SCHEMA: Any = parse_schema(SCHEMA)
HEADER: bytes = _header(PARSED_SCHEMA)
FINGERPRINT: bytes = HEADER[len(MAGIC) :]
HEADER_LENGTH = len(HEADER)

#: The batch schema, as shipped.
BATCH_SCHEMA_JSON: str = _text(BATCH_SCHEMA_FILE)
BATCH_SCHEMA: dict[str, Any] = json.loads(BATCH_SCHEMA_JSON)
PARSED_BATCH_SCHEMA: Any = parse_schema(BATCH_SCHEMA)
BATCH_HEADER: bytes = _header(PARSED_BATCH_SCHEMA)

EVENT_TYPES: tuple[str, ...] = tuple(SCHEMA["fields"][0]["type"]["symbols"])

#: The Kafka header of a trace record written after its sink dropped events:
#: ``"<sink id> <events dropped so far>"`` (ASCII), a count per sink that only grows.
DROPPED_HEADER = "rmq.trace.dropped"
