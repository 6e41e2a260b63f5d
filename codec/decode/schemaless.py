"""Protobuf wire format of no known type, read schema-less: what ``protoc --decode_raw`` shows.

``parse_wire`` reads a record as fields (number, wire type, value) and
decides, as protoc does, which length-delimited values are nested messages: a
non-empty value that parses fully as fields, within protoc's nesting budget
(``MESSAGE_DEPTH`` levels of nested messages; deeper ones stay bytes; groups
nest at most ``GROUP_DEPTH`` deep, as protobuf's parser allows). ``wire_text``
prints fields exactly as ``protoc --decode_raw``; ``wire_json``, ``wire_features``
and ``wire_tree`` are the ``cat --json`` value, the flat view and the tree.

Which records are called protobuf (``looks_like_protobuf``): the whole record
parses as wire format, and

- it is not empty and holds at least one field (an empty record is an Example);
- it is not printable UTF-8 text: short text often parses by accident
  (``b"hi"`` is field 13 = 105), and text stays readable as raw bytes. A message
  made only of printable bytes (one string field 1 of 32 to 126 characters)
  is shown as that text;
- it is not one field alone that random bytes make as easily: one varint,
  fixed32 or fixed64 (about one random 2-, 5- or 9-byte string in 17 parses
  so), or one length-delimited value of bytes that are neither a message nor
  text (one tag and a length that happens to fit). One nested message, one
  text value or one group is enough. Such a lone scalar or blob shows as raw
  bytes; ``--proto`` with its type reads it.

With these rules one or two random byte strings in 100 of 8 to 16 bytes are
still called protobuf, one in 1,000 of 32 to 128 bytes, and practically none
of a kilobyte: longer records must parse end to end, which images, pixel arrays
(a 0 byte is never a tag), compressed data and text do not.
"""
from __future__ import annotations

import base64
import re
from dataclasses import dataclass

from codec.decode.decoded import TreeNode, is_text
from codec.format.varints import U64 as _U64
from codec.format.varints import varint64 as _varint

__all__ = [
    "GROUP_DEPTH",
    "MESSAGE_DEPTH",
    "WIRE_TYPE_NAMES",
    "WireField",
    "encode_wire",
    "looks_like_protobuf",
    "parse_wire",
    "protobuf_fields",
    "wire_features",
    "wire_from_json",
    "wire_json",
    "wire_text",
    "wire_tree",
]

VARINT, FIXED64, LEN, GROUP, END_GROUP, FIXED32 = 0, 1, 2, 3, 4, 5
WIRE_TYPE_NAMES = {VARINT: "varint", FIXED64: "fixed64", LEN: "len", GROUP: "group", FIXED32: "fixed32"}
_WIRE_TYPES = {name: number for number, name in WIRE_TYPE_NAMES.items()}
MESSAGE_DEPTH = 10  # protoc's budget for printing length-delimited values as nested messages
GROUP_DEPTH = 100  # protobuf's parse recursion limit, which only groups use in unknown fields
_MAX_SIZE = (1 << 31) - 1  # protobuf refuses a length of 2 GB or more
_U32 = (1 << 32) - 1
# Bytes that are neither printable nor whitespace, in any UTF-8 text (``is_text`` refuses them).
_NOT_TEXT = re.compile(rb"[\x00-\x08\x0e-\x1b\x7f]")
# Bytes a message can start with: a tag of field 1 or more whose wire type is not 4, 6 or 7 (or a longer tag).
_STARTS_FIELD = bytes(b >= 0x80 or (b >= 8 and b & 7 in (0, 1, 2, 3, 5)) for b in range(256))


@dataclass(frozen=True, slots=True)
class WireField:
    """One field as read from the wire.

    ``value``: an int for varint, fixed32 and fixed64 (unsigned); bytes for a
    length-delimited value that is not a message; a tuple of WireField for a
    nested message (``wire_type`` 2) or a group (``wire_type`` 3).
    """

    number: int
    wire_type: int
    value: int | bytes | tuple


# The parser makes many fields: setting the slots directly skips the frozen class's checked __init__.
_new = object.__new__
_set_number = WireField.number.__set__  # type: ignore[attr-defined]
_set_wire_type = WireField.wire_type.__set__  # type: ignore[attr-defined]
_set_value = WireField.value.__set__  # type: ignore[attr-defined]


def _field(number: int, wire_type: int, value) -> WireField:
    f = _new(WireField)
    _set_number(f, number)
    _set_wire_type(f, wire_type)
    _set_value(f, value)
    return f


# ---------------------------------------------------------------- parsing


def parse_wire(data: bytes) -> tuple[WireField, ...] | None:
    """All of ``data`` as fields, or None when it is not protobuf wire format; never raises.

    Not wire format: a tag with field number 0 or a wire type of 6 or 7, an end
    of group without its start (or of another field), a group left open, a
    varint over 10 bytes, a length past the end. Reads no byte outside ``data``.
    """
    data = bytes(data)
    parsed = _parse(data, 0, len(data), MESSAGE_DEPTH, GROUP_DEPTH, 0)
    return None if parsed is None else parsed[0]


def _parse(data: bytes, pos: int, end: int, budget: int, groups: int,
           group: int) -> tuple[tuple[WireField, ...], int] | None:
    """Fields of ``data[pos:end]`` (up to the end of ``group`` when nonzero) and the position after them.

    ``budget``: how many more levels of length-delimited values may be read as
    messages (protoc's rule); ``groups``: how many more groups may nest.
    """
    fields: list[WireField] = []
    append = fields.append
    while pos < end:
        tag = data[pos]
        pos += 1
        if tag >= 0x80:  # a tag is a varint of at most 5 bytes; bits past 32 are dropped, as protobuf does
            tag &= 0x7F
            shift = 7
            while True:
                if pos >= end or shift > 28:
                    return None
                byte = data[pos]
                pos += 1
                tag |= (byte & 0x7F) << shift
                if byte < 0x80:
                    break
                shift += 7
            tag &= _U32
        number = tag >> 3
        wire_type = tag & 7
        if number == 0:
            return None
        if wire_type == VARINT:
            if pos < end and data[pos] < 0x80:
                value = data[pos]
                pos += 1
            else:
                read = _varint(data, pos, end)
                if read is None:
                    return None
                value, pos = read
            append(_field(number, VARINT, value))
        elif wire_type == LEN:
            if pos < end and data[pos] < 0x80:
                size = data[pos]
                pos += 1
            else:
                read = _varint(data, pos, min(end, pos + 5))
                if read is None or read[0] > _MAX_SIZE:
                    return None
                size, pos = read
            stop = pos + size
            if stop > end:
                return None
            nested = None
            if budget > 0 and size and _STARTS_FIELD[data[pos]]:
                nested = _parse(data, pos, stop, budget - 1, budget, 0)
            append(_field(number, LEN, data[pos:stop] if nested is None else nested[0]))
            pos = stop
        elif wire_type == FIXED32:
            if pos + 4 > end:
                return None
            append(_field(number, FIXED32, int.from_bytes(data[pos:pos + 4], "little")))
            pos += 4
        elif wire_type == FIXED64:
            if pos + 8 > end:
                return None
            append(_field(number, FIXED64, int.from_bytes(data[pos:pos + 8], "little")))
            pos += 8
        elif wire_type == GROUP:
            if groups <= 0:
                return None
            nested = _parse(data, pos, end, budget - 1, groups - 1, number)
            if nested is None:
                return None
            append(_field(number, GROUP, nested[0]))
            pos = nested[1]
        elif wire_type == END_GROUP and number == group:
            return tuple(fields), pos
        else:
            return None
    if group:
        return None
    return tuple(fields), pos


def looks_like_protobuf(data: bytes) -> bool:
    """Should a record that is no Example, SequenceExample or tensor be read as schema-less protobuf?

    The rule and its reasons are in the module docstring.
    """
    return protobuf_fields(data) is not None


def protobuf_fields(data: bytes) -> tuple[WireField, ...] | None:
    """The fields of a record :func:`looks_like_protobuf` accepts, None for others (one parse for both)."""
    data = bytes(data)
    parsed = _parse(data, 0, len(data), MESSAGE_DEPTH, GROUP_DEPTH, 0)
    if parsed is None or not parsed[0] or _text(data):
        return None
    fields = parsed[0]
    if len(fields) > 1:
        return fields
    value = fields[0].value
    return fields if isinstance(value, tuple) or (isinstance(value, bytes) and _text(value)) else None


def _text(data: bytes) -> bool:
    """``is_text``, answered at once for the usual case of bytes it cannot allow."""
    return not _NOT_TEXT.search(data) and is_text(data)


# ---------------------------------------------------------------- encoding


def _encode_varint(value: int) -> bytes:
    value &= _U64
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode_wire(fields: tuple[WireField, ...] | list[WireField]) -> bytes:
    """Fields back to bytes (shortest varints): ``encode_wire(parse_wire(b)) == b`` for what protobuf writes."""
    out = bytearray()
    for f in fields:
        out += _encode_varint(f.number << 3 | f.wire_type)
        if f.wire_type == VARINT:
            out += _encode_varint(f.value)
        elif f.wire_type == FIXED32:
            out += (f.value & _U32).to_bytes(4, "little")
        elif f.wire_type == FIXED64:
            out += (f.value & _U64).to_bytes(8, "little")
        elif f.wire_type == LEN:
            payload = bytes(f.value) if isinstance(f.value, (bytes, bytearray)) else encode_wire(f.value)
            out += _encode_varint(len(payload)) + payload
        elif f.wire_type == GROUP:
            out += encode_wire(f.value) + _encode_varint(f.number << 3 | END_GROUP)
        else:
            raise ValueError(f"field {f.number}: no wire type {f.wire_type}")
    return bytes(out)


# ---------------------------------------------------------------- protoc's text


# absl::CEscape, which protoc uses for strings: named escapes, other bytes outside printable ASCII in octal.
_C_ESCAPES = {b: f"\\{b:03o}" for b in (*range(0x20), *range(0x7F, 0x100))}
_C_ESCAPES.update({0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r", 0x22: '\\"', 0x27: "\\'", 0x5C: "\\\\"})


def _c_escape(value: bytes) -> str:
    return value.decode("latin-1").translate(_C_ESCAPES)


def wire_text(fields: tuple[WireField, ...]) -> str:
    """The fields as ``protoc --decode_raw`` prints them, byte for byte (a newline after each line)."""
    lines: list[str] = []
    _text_lines(fields, "", lines)
    return "".join(lines)


def _text_lines(fields: tuple[WireField, ...], indent: str, lines: list[str]) -> None:
    for f in fields:
        if f.wire_type == VARINT:
            lines.append(f"{indent}{f.number}: {f.value}\n")
        elif f.wire_type == FIXED32:
            lines.append(f"{indent}{f.number}: 0x{f.value:08x}\n")
        elif f.wire_type == FIXED64:
            lines.append(f"{indent}{f.number}: 0x{f.value:016x}\n")
        elif isinstance(f.value, tuple):
            lines.append(f"{indent}{f.number} {{\n")
            _text_lines(f.value, indent + "  ", lines)
            lines.append(f"{indent}}}\n")
        else:
            lines.append(f'{indent}{f.number}: "{_c_escape(f.value)}"\n')


# ---------------------------------------------------------------- JSON


def wire_json(fields: tuple[WireField, ...]) -> dict:
    """The ``cat --json`` value: ``{"fields": [{"number", "wire_type", "value"}, ...]}``, in wire order.

    ``wire_type`` is "varint", "fixed32", "fixed64" (values as unsigned ints),
    "len" or "group". A "len" value is a nested message ``{"fields": [...]}`` or
    bytes ``{"base64": ...}`` with ``"text"`` too when the bytes are UTF-8 text
    (or empty). A group's value is ``{"fields": [...]}``. ``wire_from_json``
    reads it back.
    """
    out = []
    for f in fields:
        value = f.value
        if isinstance(value, tuple):
            value = wire_json(value)
        elif isinstance(value, bytes):
            value = _bytes_json(value)
        out.append({"number": f.number, "wire_type": WIRE_TYPE_NAMES[f.wire_type], "value": value})
    return {"fields": out}


def _bytes_json(value: bytes) -> dict:
    member = {"base64": base64.b64encode(value).decode("ascii")}
    if not value or is_text(value):
        member["text"] = value.decode("utf-8")
    return member


def wire_from_json(obj: dict) -> tuple[WireField, ...]:
    """The fields a :func:`wire_json` value describes (``encode_wire`` makes the record's bytes)."""
    fields = []
    for item in obj["fields"]:
        wire_type = _WIRE_TYPES[item["wire_type"]]
        value = item["value"]
        if isinstance(value, dict):
            value = wire_from_json(value) if "fields" in value else base64.b64decode(value["base64"])
        fields.append(WireField(int(item["number"]), wire_type, value))
    return tuple(fields)


# ---------------------------------------------------------------- flat view


def wire_features(fields: tuple[WireField, ...]) -> dict[str, tuple[str, list]]:
    """The flat view: dotted field-number paths (``"1"``, ``"3.2"``) -> (dtype, values over all repeats).

    Varints, fixed32 and fixed64 are "int64" (values of 2**63 and more as
    signed two's complement, as an int64 feature holds them); bytes that are
    not a message are "bytes". Nested messages and groups add their fields
    under ``"N."``. A path that holds both kinds keeps its first under the
    path and the other under ``"path:int64"`` or ``"path:bytes"``.
    """
    out: dict[str, tuple[str, list]] = {}
    _flatten(fields, "", out)
    return out


def _flatten(fields: tuple[WireField, ...], prefix: str, out: dict[str, tuple[str, list]]) -> None:
    for f in fields:
        key = f"{prefix}{f.number}"
        value = f.value
        if isinstance(value, tuple):
            _flatten(value, key + ".", out)
            continue
        if isinstance(value, bytes):
            dtype = "bytes"
        else:
            dtype = "int64"
            if value >= 1 << 63:
                value -= 1 << 64
        held = out.get(key)
        if held is not None and held[0] != dtype:
            key = f"{key}:{dtype}"
            held = out.get(key)
        if held is None:
            out[key] = (dtype, [value])
        else:
            held[1].append(value)


# ---------------------------------------------------------------- tree


_SCALAR_DTYPES = {VARINT: "varint", FIXED32: "fixed32", FIXED64: "fixed64"}


def wire_tree(fields: tuple[WireField, ...]) -> TreeNode:
    """The fields as a tree: root role "protobuf", named "protobuf (no schema)".

    Children in wire order; a run of one field number with values of one kind
    is one node: a "field" (dtype "varint", "fixed32", "fixed64", "string" when
    every value is UTF-8 text, else "bytes"), a "message" (dtype "message", or
    "group"), or a "repeated" node of "[i]" messages. A path element is the
    field number, or ``"N#k"`` for the k-th later run of number N among siblings.
    """
    return TreeNode(name="protobuf (no schema)", role="protobuf", children=_tree_children(fields, ()))


def _run_kind(f: WireField) -> object:
    """Which fields share a node: scalars by wire type, bytes together, messages together, groups together."""
    if isinstance(f.value, bytes):
        return "bytes"
    return f.wire_type


def _tree_children(fields: tuple[WireField, ...], path: tuple) -> list[TreeNode]:
    runs: list[list[WireField]] = []
    for f in fields:
        if runs and runs[-1][0].number == f.number and _run_kind(runs[-1][0]) == _run_kind(f):
            runs[-1].append(f)
        else:
            runs.append([f])
    seen: dict[int, int] = {}
    children = []
    for run in runs:
        number = run[0].number
        later = seen.get(number, 0)
        seen[number] = later + 1
        children.append(_run_node(run, path + ((number if not later else f"{number}#{later}"),)))
    return children


def _run_node(run: list[WireField], path: tuple) -> TreeNode:
    first = run[0]
    name = str(first.number)
    if isinstance(first.value, tuple):
        dtype = "group" if first.wire_type == GROUP else "message"
        if len(run) == 1:
            return TreeNode(name=name, role="message", dtype=dtype, path=path,
                            children=_tree_children(first.value, path))
        items = [TreeNode(name=f"[{i}]", role="message", dtype=dtype, path=path + (i,),
                          children=_tree_children(f.value, path + (i,))) for i, f in enumerate(run)]
        return TreeNode(name=name, role="repeated", dtype=dtype, path=path, children=items)
    values = [f.value for f in run]
    if isinstance(first.value, bytes):
        text = all(not v or is_text(v) for v in values) and any(values)
        dtype = "string" if text else "bytes"
    else:
        dtype = _SCALAR_DTYPES[first.wire_type]
    return TreeNode(name=name, role="field", dtype=dtype, values=values, path=path)
