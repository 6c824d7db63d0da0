"""A writer and a reader compiled from one flat Avro record schema (the trace event's).

fastavro interprets the schema for every datum and picks union branches by validating
each one: about 19 µs to write a trace event and 15 µs to read one. The functions built
here are Python source generated once from the parsed schema (one straight-line block
per field) and run several times faster; the bytes are Avro's binary encoding, the same
as fastavro's ``schemaless_writer`` (``tests/unit/trace/test_trace_avro.py`` checks both ways
over random events).

Supported field types, all the trace schema uses: ``long``, ``int``, ``string``, ``enum``
and a union of ``null`` with one of those. Anything else is refused when compiling.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from operator import itemgetter
from typing import Any

#: Writes a record: the given prefix (e.g. a single-object header) then the Avro body.
Writer = Callable[[Mapping[str, Any], bytes], bytes]
#: Reads a record from ``data`` starting at byte ``start``; raises ValueError,
#: IndexError or UnicodeDecodeError for bytes that are not one.
Reader = Callable[[bytes, int], dict[str, Any]]

_LONG = (-(2**63), 2**63 - 1)
_LONG_BITS = 2**64 - 1
_INT = (-(2**31), 2**31 - 1)
_RANGES = {"long": _LONG, "int": _INT}
#: String fields whose encodings are cached this many at most (then forgotten at once).
CACHE_LIMIT = 4096


class AvroSchemaError(ValueError):
    """The schema uses a type these compiled functions do not support."""


class AvroWriteError(ValueError):
    """A record does not match the schema (missing field, wrong type, out of range)."""


def _varint(n: int) -> bytes:
    """Avro's variable-length encoding of an already zig-zagged ``n`` >= 0."""
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


#: The encoding of every zig-zagged value below 128: one byte.
_SMALL = tuple(bytes((i,)) for i in range(128))
#: The value of every one-byte encoding.
_ZZ = tuple((i >> 1) ^ -(i & 1) for i in range(128))


def zigzag_long(value: int) -> bytes:
    """The Avro ``long``/``int`` encoding of ``value`` (no range check)."""
    n = (value << 1) ^ (value >> 63)
    return _SMALL[n] if n < 128 else _varint(n)


def _branch(kind: Any) -> tuple[str, tuple[str, ...]]:
    """``(primitive name, enum symbols)`` of a non-null type."""
    if isinstance(kind, dict) and kind.get("type") == "enum":
        return "enum", tuple(kind["symbols"])
    if kind in ("long", "int", "string"):
        return str(kind), ()
    raise AvroSchemaError(f"unsupported Avro type {kind!r}")


def _field_type(kind: Any) -> tuple[int | None, str, tuple[str, ...]]:
    """``(index of null in the union or None, type, enum symbols)`` of a field type."""
    if isinstance(kind, list):
        if len(kind) != 2 or "null" not in kind:
            raise AvroSchemaError(f"only [null, T] unions are supported, not {kind!r}")
        null = kind.index("null")
        return null, *_branch(kind[1 - null])
    return None, *_branch(kind)


class _Generator:
    """Source text and constants of the compiled functions."""

    def __init__(self, fields: list[dict[str, Any]], cached: Collection[str]) -> None:
        self.fields = fields
        self.cached = cached
        self.consts: dict[str, Any] = {
            "_varint": _varint,
            "_ZZ": _ZZ,
            "AvroWriteError": AvroWriteError,
        }

    def const(self, name: str, value: Any) -> str:
        self.consts[name] = value
        return name

    # writer ---------------------------------------------------------------------------

    def write_value(self, i: int, kind: str, symbols: tuple[str, ...], pad: str) -> list[str]:
        if kind == "enum":
            table = self.const(f"_enum{i}", {s: zigzag_long(k) for k, s in enumerate(symbols)})
            return [f"{pad}out += {table}[v]"]
        if kind in _RANGES:
            low, high = _RANGES[kind]
            return [
                f"{pad}if not {low} <= v <= {high}: raise OverflowError(v)",
                f"{pad}n = (v << 1) ^ (v >> 63)",
                f"{pad}while n > 127:",
                f"{pad}    ap((n & 127) | 128)",
                f"{pad}    n >>= 7",
                f"{pad}ap(n)",
            ]
        if self.fields[i]["name"] not in self.cached:
            return [
                f"{pad}b = v.encode()",
                f"{pad}n = len(b) << 1",
                f"{pad}if n < 128: ap(n)",
                f"{pad}else: out += _varint(n)",
                f"{pad}out += b",
            ]
        cache = self.const(f"_cache{i}", {})
        return [
            f"{pad}c = {cache}.get(v)",
            f"{pad}if c is None:",
            f"{pad}    b = v.encode()",
            f"{pad}    c = _varint(len(b) << 1) + b",
            f"{pad}    if len({cache}) >= {CACHE_LIMIT}: {cache}.clear()",
            f"{pad}    {cache}[v] = c",
            f"{pad}out += c",
        ]

    def writer_source(self) -> str:
        names = [field["name"] for field in self.fields]
        values = ", ".join(f"v{i}" for i in range(len(names)))
        gets = []
        for i, field in enumerate(self.fields):
            default = field.get("default")
            gets.append(
                f"get({field['name']!r})"
                if default is None
                else (f"get({field['name']!r}, {self.const(f'_default{i}', default)})")
            )
        lines = [
            "def write(r, prefix):",
            "    out = bytearray(prefix)",
            "    ap = out.append",
            "    try:",
            "        try:",  # every field present: one C call reads them all
            f"            {values}, = _every(r)",
            "        except KeyError:",
            "            get = r.get",
            f"            {values}, = {', '.join(gets)},",
        ]
        self.const("_every", itemgetter(*names))
        for i, field in enumerate(self.fields):
            null, kind, symbols = _field_type(field["type"])
            lines.append(f"        v = v{i}")
            if null is None:
                lines += self.write_value(i, kind, symbols, " " * 8)
                continue
            lines += [
                "        if v is None:",
                f"            ap({null << 1})",
                "        else:",
                f"            ap({(1 - null) << 1})",
                *self.write_value(i, kind, symbols, " " * 12),
            ]
        lines += [
            "    except (KeyError, TypeError, AttributeError, ValueError, OverflowError) as exc:",
            "        raise AvroWriteError(_explain(r)) from exc",
            "    return bytes(out)",
        ]
        return "\n".join(lines)

    # reader ---------------------------------------------------------------------------

    @staticmethod
    def read_long(pad: str, target: str) -> list[str]:
        """Lines reading one zig-zag varint at ``p`` into ``target``."""
        return [
            f"{pad}b = data[p]",
            f"{pad}p += 1",
            f"{pad}if b < 128:",
            f"{pad}    {target} = _ZZ[b]",
            f"{pad}else:",
            f"{pad}    n = b & 127",
            f"{pad}    s = 7",
            f"{pad}    while True:",
            f"{pad}        b = data[p]",
            f"{pad}        p += 1",
            f"{pad}        n |= (b & 127) << s",
            f"{pad}        if b < 128: break",
            f"{pad}        s += 7",
            f"{pad}        if s > 63: raise ValueError('a varint longer than 10 bytes')",
            # a 10th byte can carry bits beyond 64: dropped, as a 64-bit reader does
            f"{pad}    {target} = ((n & {_LONG_BITS}) >> 1) ^ -(n & 1)",
        ]

    def read_value(self, i: int, kind: str, symbols: tuple[str, ...], pad: str) -> list[str]:
        if kind == "enum":
            table = self.const(f"_symbols{i}", symbols)
            return [
                *self.read_long(pad, "k"),
                f"{pad}if not 0 <= k < {len(symbols)}:",
                f"{pad}    raise ValueError(f'enum index {{k}} of {self.fields[i]['name']}')",
                f"{pad}f{i} = {table}[k]",
            ]
        if kind in _RANGES:
            return self.read_long(pad, f"f{i}")
        return [
            *self.read_long(pad, "k"),
            f"{pad}e = p + k",
            f"{pad}if k < 0 or e > size: raise EOFError('string past the end')",
            f"{pad}f{i} = data[p:e].decode()",
            f"{pad}p = e",
        ]

    def reader_source(self) -> str:
        lines = ["def read(data, p):", "    size = len(data)"]
        for i, field in enumerate(self.fields):
            null, kind, symbols = _field_type(field["type"])
            if null is None:
                lines += self.read_value(i, kind, symbols, " " * 4)
                continue
            value = self.read_value(i, kind, symbols, " " * 12)
            lines += [  # the union index is one byte, but any varint spelling of it is valid
                "    b = data[p]",
                f"    if b == {null << 1}:",
                "        p += 1",
                f"        f{i} = None",
                f"    elif b == {(1 - null) << 1}:",
                "        p += 1",
                *(line[4:] for line in value),
                "    else:",
                *self.read_long(" " * 8, "u"),
                f"        if u == {null}:",
                f"            f{i} = None",
                f"        elif u == {1 - null}:",
                *value,
                "        else:",
                f"            raise ValueError(f'union index {{u}} of {field['name']}')",
            ]
        items = ", ".join(f"{field['name']!r}: f{i}" for i, field in enumerate(self.fields))
        lines.append(f"    return {{{items}}}")
        return "\n".join(lines)


def _explainer(fields: list[dict[str, Any]]) -> Callable[[Any], str]:
    """Names the first field of a record that does not match its type (error path only)."""

    def fits(value: Any, kind: str, symbols: tuple[str, ...]) -> bool:
        if kind == "enum":
            return value in symbols
        if kind == "string":
            return isinstance(value, str)
        low, high = _RANGES[kind]
        return isinstance(value, int) and low <= value <= high

    def explain(record: Any) -> str:
        if not isinstance(record, Mapping):
            return f"a record must be a mapping, not {type(record).__name__}"
        for field in fields:
            null, kind, symbols = _field_type(field["type"])
            value = record.get(field["name"], field.get("default"))
            if (value is None and null is None) or (
                value is not None and not fits(value, kind, symbols)
            ):
                return f"field {field['name']!r} ({kind}) cannot hold {value!r}"
        return "a string is not encodable as UTF-8"

    return explain


def compile_record(
    schema: Mapping[str, Any], cached_strings: Collection[str] = ()
) -> tuple[Writer, Reader]:
    """``(write, read)`` for the record ``schema`` (parsed or as JSON-loaded).

    ``write(record, prefix)`` returns ``prefix`` followed by the Avro binary body of
    ``record`` (absent fields take their default); it raises :class:`AvroWriteError`
    naming the first field that does not fit. ``read(data, start)`` returns the record
    whose body starts at ``data[start]``. ``cached_strings`` names string fields whose
    values repeat (client id, group, topic): their encodings are kept, at most
    :data:`CACHE_LIMIT` per field.

    Raises:
        AvroSchemaError: the schema is not a record of supported field types.
    """
    if schema.get("type") != "record":
        raise AvroSchemaError(f"a record schema is required, not {schema.get('type')!r}")
    fields = list(schema["fields"])
    generator = _Generator(fields, frozenset(cached_strings))
    source = generator.writer_source() + "\n\n" + generator.reader_source()
    namespace = generator.consts | {"_explain": _explainer(fields)}
    exec(compile(source, f"<avro {schema.get('name', 'record')}>", "exec"), namespace)  # noqa: S102
    return namespace["write"], namespace["read"]
