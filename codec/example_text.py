"""Protobuf text format of an Example or SequenceExample, written straight from its bytes.

``cat`` prints a record as ``text_format.MessageToString(message, as_utf8=True)``
gives it. Importing protobuf's message classes and text_format is ~20 ms, a
quarter of a one-record ``cat`` (whose bar is a fifth of TensorFlow's skip to the
last record of a GZIP file), and text_format then takes ~100 µs a record. For a
record in the layout protobuf and TensorFlow write (each message field once and
in field order, numbers packed, map entries as key then value, keys valid UTF-8),
:func:`example_text` walks the wire format and writes that same text. For any
other record it returns None and the caller decodes it with protobuf. The tests
hold the two equal on random records and on mutations of them.

Only the escaping is protobuf's own (``text_encoding.CEscape``, which imports
nothing else); a float is spelt as text_format spells a float field.
"""
from __future__ import annotations

import struct

from google.protobuf.text_encoding import CEscape

from .varints import varint64

__all__ = ["example_text"]

_FLOAT = struct.Struct("<f")
_SIGN = 1 << 63
_MAX_LENGTH = 2**31 - 1  # upb refuses a length of INT32_MAX or more
_TAG_1, _TAG_2, _TAG_3 = 0x0A, 0x12, 0x1A  # fields 1, 2 and 3, length-delimited
_LISTS = {_TAG_1: "bytes_list", _TAG_2: "float_list", _TAG_3: "int64_list"}


class _Declined(Exception):
    """Not the canonical layout: the caller decodes the record with protobuf."""


def example_text(data: bytes) -> tuple[str, str] | None:
    """(kind, text) as ``decode_record`` and ``record_text`` give them, or None.

    ``kind`` is "example" or "sequence_example"; ``text`` has no trailing
    whitespace. None for any record not in the canonical layout of either.
    """
    if not isinstance(data, bytes):
        data = bytes(data)
    out: list[str] = []
    try:
        fields = _fields(data, 0, len(data))
        tags = [tag for tag, _, _ in fields]
        if tags in ([], [_TAG_1]):
            kind = "example"
        elif tags in ([_TAG_2], [_TAG_1, _TAG_2]):
            kind = "sequence_example"
        else:
            return None
        for tag, start, end in fields:
            name, body = _TOP_FIELDS[kind][tag]
            _message(out, "", name, body, data, start, end)
    except (_Declined, OverflowError):
        return None
    return kind, "".join(out).rstrip()


def _fields(data: bytes, pos: int, end: int) -> list[tuple[int, int, int]]:
    """(tag, start, end) of the length-delimited fields of ``data[pos:end]`` (one-byte tags only)."""
    fields = []
    while pos < end:
        tag = data[pos]
        if tag & 7 != 2 or tag >= 0x80 or pos + 1 >= end:
            raise _Declined
        length = data[pos + 1]
        start = pos + 2
        if length >= 0x80:
            read = varint64(data, pos + 1, end)
            if read is None:
                raise _Declined
            length, start = read
        pos = start + length
        if pos > end or length >= _MAX_LENGTH:
            raise _Declined
        fields.append((tag, start, pos))
    return fields


def _message(out: list, indent: str, name: str, body, data: bytes, start: int, end: int) -> None:
    out.append(f"{indent}{name} {{\n")
    body(out, indent + "  ", data, start, end)
    out.append(f"{indent}}}\n")


def _map(out: list, indent: str, name: str, body, data: bytes, start: int, end: int) -> None:
    """A ``map<string, V>`` field: one entry per key, sorted, the last of a repeated key (as protobuf reads)."""
    entries = {}
    for tag, entry_start, entry_end in _fields(data, start, end):
        entry = _fields(data, entry_start, entry_end)
        if tag != _TAG_1 or len(entry) != 2 or entry[0][0] != _TAG_1 or entry[1][0] != _TAG_2:
            raise _Declined
        try:
            key = data[entry[0][1]:entry[0][2]].decode("utf-8")
        except UnicodeDecodeError:
            raise _Declined from None  # protobuf refuses the record: its kind is decided there
        entries[key] = entry[1]
    inner = indent + "  "
    for key in sorted(entries):
        out.append(f"{indent}{name} {{\n")
        if key:  # proto3: an empty key is the default, and text_format leaves it out
            out.append(f'{inner}key: "{CEscape(key, True)}"\n')
        _, value_start, value_end = entries[key]
        _message(out, inner, "value", body, data, value_start, value_end)
        out.append(f"{indent}}}\n")


def _features(out: list, indent: str, data: bytes, start: int, end: int) -> None:
    _map(out, indent, "feature", _feature, data, start, end)


def _feature_lists(out: list, indent: str, data: bytes, start: int, end: int) -> None:
    _map(out, indent, "feature_list", _feature_list, data, start, end)


def _feature_list(out: list, indent: str, data: bytes, start: int, end: int) -> None:
    for tag, feature_start, feature_end in _fields(data, start, end):
        if tag != _TAG_1:
            raise _Declined
        _message(out, indent, "feature", _feature, data, feature_start, feature_end)


def _feature(out: list, indent: str, data: bytes, start: int, end: int) -> None:
    fields = _fields(data, start, end)
    if not fields:
        return  # no kind set: an empty Feature
    if len(fields) != 1:
        raise _Declined  # a oneof set twice: protobuf keeps the last, or merges
    tag, list_start, list_end = fields[0]
    name = _LISTS.get(tag)
    if name is None:
        raise _Declined
    out.append(f"{indent}{name} {{\n")
    prefix = indent + "  value: "
    values = _fields(data, list_start, list_end)
    if tag == _TAG_1:
        for value_tag, a, b in values:
            if value_tag != _TAG_1:
                raise _Declined
            out.append(f'{prefix}"{CEscape(data[a:b], False)}"\n')
    elif values:
        if len(values) != 1 or values[0][0] != _TAG_1:
            raise _Declined  # unpacked, or packed in several runs
        _, a, b = values[0]
        if tag == _TAG_2:
            if (b - a) % 4:
                raise _Declined
            out.extend(f"{prefix}{_float_text(x)}\n" for (x,) in _FLOAT.iter_unpack(data[a:b]))
        else:
            while a < b:
                read = varint64(data, a, b)
                if read is None:
                    raise _Declined
                x, a = read
                out.append(f"{prefix}{x - (x & _SIGN) * 2}\n")  # int64: two's complement
    out.append(f"{indent}}}\n")


def _float_text(x: float) -> str:
    """A float field's value as text_format writes it (protobuf's ``ToShortestFloat``): the shortest
    decimal, from 6 significant digits up, that is the same float32."""
    if x != x:
        return "nan"
    precision = 6
    rounded = float(f"{x:.{precision}g}")
    while _FLOAT.unpack(_FLOAT.pack(rounded))[0] != x:
        precision += 1
        rounded = float(f"{x:.{precision}g}")
    return str(rounded)


# The top-level fields of each kind: (name, writer of the message's body).
_TOP_FIELDS = {
    "example": {_TAG_1: ("features", _features)},
    "sequence_example": {_TAG_1: ("context", _features), _TAG_2: ("feature_lists", _feature_lists)},
}
