"""The trace event schema (``trace_event.avsc``, shipped in the package) and its identity.

Trace records use Avro's single-object encoding: the two marker bytes ``C3 01``, the
schema's 8-byte CRC-64-AVRO fingerprint (little-endian) of its parsing canonical form,
then the Avro binary body. A reader compares the ten header bytes with
:data:`HEADER` and so knows which schema version wrote a record.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from fastavro import parse_schema
from fastavro.schema import fingerprint, to_parsing_canonical_form

SCHEMA_FILE = "trace_event.avsc"
#: Avro's single-object encoding marker.
MAGIC = b"\xc3\x01"

#: The schema as JSON text, exactly as shipped (Spark's ``from_avro`` takes this).
SCHEMA_JSON: str = resources.files(__package__).joinpath(SCHEMA_FILE).read_text("utf-8")
SCHEMA: dict[str, Any] = json.loads(SCHEMA_JSON)
PARSED_SCHEMA: Any = parse_schema(SCHEMA)
#: CRC-64-AVRO of the parsing canonical form; fastavro's hex digits are the
#: little-endian bytes that single-object encoding writes.
FINGERPRINT: bytes = bytes.fromhex(
    fingerprint(to_parsing_canonical_form(PARSED_SCHEMA), "CRC-64-AVRO")
)
HEADER: bytes = MAGIC + FINGERPRINT
HEADER_LENGTH = len(HEADER)

EVENT_TYPES: tuple[str, ...] = tuple(SCHEMA["fields"][0]["type"]["symbols"])
