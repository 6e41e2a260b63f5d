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
from binascii import b2a_base64
from json.encoder import encode_basestring_ascii as _json_string

from google.protobuf.text_encoding import CEscape

from codec.format.varints import varint64

__all__ = ["example_json", "example_json_line", "example_text"]

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
    return _written(data, _text_of)


def _written(data: bytes, write) -> tuple[str, str] | None:
    """(kind, ``write(kind, data, fields)``) of an Example or SequenceExample in the canonical layout
    (its top-level fields as (tag, start, end)), or None."""
    if not isinstance(data, bytes):
        data = bytes(data)
    try:
        fields = _fields(data, 0, len(data))
        tags = [tag for tag, _, _ in fields]
        if tags in ([], [_TAG_1]):
            kind = "example"
        elif tags in ([_TAG_2], [_TAG_1, _TAG_2]):
            kind = "sequence_example"
        else:
            return None
        return kind, write(kind, data, fields)
    except (_Declined, OverflowError):
        return None


def _text_of(kind: str, data: bytes, fields: list) -> str:
    out: list[str] = []
    for tag, start, end in fields:
        name, body = _TOP_FIELDS[kind][tag]
        _message(out, "", name, body, data, start, end)
    return "".join(out).rstrip()


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


def _length(data: bytes, at: int, end: int) -> tuple[int, int]:
    """The length varint at ``at`` (below ``end``) and where its field starts; long ones through varint64."""
    read = varint64(data, at, end)
    if read is None or read[0] >= _MAX_LENGTH:
        raise _Declined
    return read


def _field(data: bytes, pos: int, end: int, tag: int) -> tuple[int, int]:
    """(start, end) of the length-delimited field ``tag`` at ``pos``, which must lie within ``end``."""
    if pos + 1 >= end or data[pos] != tag:
        raise _Declined
    n, start = data[pos + 1], pos + 2
    if n >= 0x80:
        n, start = _length(data, pos + 1, end)
    if start + n > end:
        raise _Declined
    return start, start + n


def _entries(data: bytes, start: int, end: int) -> list[tuple[str, int, int]]:
    """A ``map<string, V>`` field's (key, value start, value end): one per key, sorted by key, the last
    of a repeated key (as protobuf reads it). Each entry is a key then a value, nothing else."""
    entries = {}
    pos = start
    while pos < end:
        entry_start, pos = _field(data, pos, end, _TAG_1)
        key_start, key_end = _field(data, entry_start, pos, _TAG_1)
        value_start, value_end = _field(data, key_end, pos, _TAG_2)
        if value_end != pos:
            raise _Declined
        try:
            entries[data[key_start:key_end].decode("utf-8")] = value_start, pos
        except UnicodeDecodeError:
            raise _Declined from None  # protobuf refuses the record: its kind is decided there
    return [(key, *entries[key]) for key in sorted(entries)]


def _map(out: list, indent: str, name: str, body, data: bytes, start: int, end: int) -> None:
    """A ``map<string, V>`` field: one entry per key, sorted."""
    inner = indent + "  "
    for key, value_start, value_end in _entries(data, start, end):
        out.append(f"{indent}{name} {{\n")
        if key:  # proto3: an empty key is the default, and text_format leaves it out
            out.append(f'{inner}key: "{CEscape(key, True)}"\n')
        _message(out, inner, "value", body, data, value_start, value_end)
        out.append(f"{indent}}}\n")


def _features(out: list, indent: str, data: bytes, start: int, end: int) -> None:
    _map(out, indent, "feature", _feature, data, start, end)


def _feature_lists(out: list, indent: str, data: bytes, start: int, end: int) -> None:
    _map(out, indent, "feature_list", _feature_list, data, start, end)


def _list_steps(data: bytes, start: int, end: int) -> list[tuple[int, int, int]]:
    """A FeatureList's features (tag, start, end)."""
    steps = _fields(data, start, end)
    if any(tag != _TAG_1 for tag, _, _ in steps):
        raise _Declined
    return steps


def _feature_list(out: list, indent: str, data: bytes, start: int, end: int) -> None:
    for _, feature_start, feature_end in _list_steps(data, start, end):
        _message(out, indent, "feature", _feature, data, feature_start, feature_end)


def _values(data: bytes, start: int, end: int) -> tuple[int, list | bytes]:
    """A Feature's list (its tag, 0 for none set) and values: (start, end) spans of the bytes values,
    the packed floats' bytes, or the ints."""
    if start == end:
        return 0, []  # no kind set: an empty Feature
    tag = data[start]
    if tag not in _LISTS:
        raise _Declined
    pos, stop = _field(data, start, end, tag)
    if stop != end:
        raise _Declined  # a oneof set twice (protobuf keeps the last, or merges)
    if tag == _TAG_1:
        spans = []
        while pos < end:
            a, pos = _field(data, pos, end, _TAG_1)
            spans.append((a, pos))
        return tag, spans
    if pos == end:
        return tag, [] if tag == _TAG_3 else b""
    a, stop = _field(data, pos, end, _TAG_1)  # unpacked values are declined here
    if stop != end:
        raise _Declined  # packed in several runs
    if tag == _TAG_2:
        if (end - a) % 4:
            raise _Declined
        return tag, data[a:end]
    return tag, _packed_ints(data, a, end)


def _packed_ints(data: bytes, a: int, end: int) -> list[int]:
    """The int64 values packed in ``data[a:end]``."""
    ints = []
    while a < end:
        x = data[a]
        if x < 0x80:
            a += 1
        else:
            read = varint64(data, a, end)
            if read is None:
                raise _Declined
            x, a = read
            x -= (x & _SIGN) * 2  # int64: two's complement
        ints.append(x)
    return ints


def _feature(out: list, indent: str, data: bytes, start: int, end: int) -> None:
    tag, values = _values(data, start, end)
    if not tag:
        return
    out.append(f"{indent}{_LISTS[tag]} {{\n")
    prefix = indent + "  value: "
    if tag == _TAG_1:
        out.extend(f'{prefix}"{CEscape(data[a:b], False)}"\n' for a, b in values)
    elif tag == _TAG_2:
        out.extend(f"{prefix}{_float_text(x)}\n" for (x,) in _FLOAT.iter_unpack(values))
    else:
        out.extend(f"{prefix}{x}\n" for x in values)
    out.append(f"{indent}}}\n")


def _float_text(x: float) -> str:
    """A float field's value as text_format writes it."""
    return "nan" if x != x else str(_shortest(x))


def _shortest(x: float) -> float:
    """Protobuf's ``ToShortestFloat``: the shortest decimal, from 6 significant digits up, that is the
    same float32 (text_format and json_format both spell a float field so)."""
    precision = 6
    rounded = float("%.6g" % x)
    while _FLOAT.unpack(_FLOAT.pack(rounded))[0] != x:
        precision += 1
        rounded = float("%.*g" % (precision, x))
    return rounded


# The top-level fields of each kind: (name, writer of the message's body).
_TOP_FIELDS = {
    "example": {_TAG_1: ("features", _features)},
    "sequence_example": {_TAG_1: ("context", _features), _TAG_2: ("feature_lists", _feature_lists)},
}


# ---------------------------------------------------------------- protobuf's JSON mapping

def example_json(data: bytes) -> tuple[str, str] | None:
    """(kind, JSON) of an Example or SequenceExample in the canonical layout, or None.

    The JSON is ``json.dumps`` of what ``cat --json`` shows as a record's
    ``value``: protobuf's ``MessageToDict`` with the feature maps in key order.
    """
    return _written(data, _json_of)


def _json_of(kind: str, data: bytes, fields: list) -> str:
    names = _JSON_FIELDS[kind]
    return "{" + ", ".join([f"{names[tag]}: "
                            + (_features_json(data, start, end) if tag == _TAG_1 else _lists_json(data, start, end))
                            for tag, start, end in fields]) + "}"


def example_json_line(index: int, data: bytes, status, offset: int | None, length: int | None) -> str | None:
    """A whole ``cat --json`` line (``json.dumps`` of ``codec.decode.json_lines.json_line``'s object, no
    payload or labels) of an Example or SequenceExample in the canonical layout, or None."""
    shown = example_json(data)
    if shown is None:
        return None
    return line_head(index, data, status, offset, length, shown[0]) + shown[1] + "}"


def line_head(index: int, data: bytes, status, offset: int | None, length: int | None, kind: str) -> str:
    """A ``cat --json`` line up to its value: ``{"index": ..., "value": ``."""
    return line_format(kind, offset is not None) % line_fields(index, data, status, offset, length)


def line_format(kind: str, with_offset: bool) -> str:
    """The %-format of a line's head, for :func:`line_fields`."""
    return ('{"index": %d, ' + ('"offset": %d, ' if with_offset else "")
            + f'"length": %d, "status": %s, "kind": "{kind}", "value": ')


def line_fields(index: int, data: bytes, status, offset: int | None, length: int | None) -> tuple:
    """The values of :func:`line_format`'s head."""
    label = _STATUS_JSON.get(status)
    if label is None:
        label = _STATUS_JSON[status] = _json_string(status.label)
    n = len(data) if length is None else length
    return (index, n, label) if offset is None else (index, offset, n, label)


_STATUS_JSON: dict = {}  # a record status -> its label as a JSON string


def _json_map(data: bytes, start: int, end: int, name: str, value) -> str:
    entries = _entries(data, start, end)
    if not entries:
        return "{}"  # an empty map is left out, and its message is {}
    return ("{" + name + ": {"
            + ", ".join(f"{_json_string(key)}: {value(data, a, b)}" for key, a, b in entries) + "}}")


def _features_json(data: bytes, start: int, end: int) -> str:
    return _json_map(data, start, end, '"feature"', _feature_json)


def _lists_json(data: bytes, start: int, end: int) -> str:
    return _json_map(data, start, end, '"featureList"', _feature_list_json)


def _feature_list_json(data: bytes, start: int, end: int) -> str:
    steps = _list_steps(data, start, end)
    if not steps:
        return "{}"
    return '{"feature": [' + ", ".join(_feature_json(data, a, b) for _, a, b in steps) + "]}"


def _feature_json(data: bytes, start: int, end: int) -> str:
    """A Feature's JSON; a small one spelt once per process (labels, sizes and flags repeat)."""
    if end - start > _SMALL_FEATURE:
        return _feature_json_of(data, start, end)
    raw = data[start:end]
    text = _SPELT.get(raw)
    if text is None:
        if len(_SPELT) >= _SPELT_MAX:
            _SPELT.clear()
        text = _SPELT[raw] = _feature_json_of(raw, 0, len(raw))
    return text


def _feature_json_of(data: bytes, start: int, end: int) -> str:
    tag, values = _values(data, start, end)
    if not tag:
        return "{}"
    if not values:
        return _JSON_LISTS[tag] + "{}}"
    if tag == _TAG_1:
        shown = ", ".join([f'"{b2a_base64(data[a:b], newline=False).decode()}"' for a, b in values])
    elif tag == _TAG_2:
        shown = ", ".join([_float_json(x) for (x,) in _FLOAT.iter_unpack(values)])
    else:
        shown = ", ".join([f'"{x}"' for x in values])  # int64 as strings
    return _JSON_LISTS[tag] + '{"value": [' + shown + "]}}"


def _float_json(x: float) -> str:
    if x - x == 0.0:  # finite
        return repr(_shortest(x))
    return '"NaN"' if x != x else '"Infinity"' if x > 0 else '"-Infinity"'


_SPELT: dict[bytes, str] = {}  # a small Feature's bytes -> its JSON
_SPELT_MAX = 1 << 14  # entries, ~2 MB at most
_SMALL_FEATURE = 48  # bytes


_JSON_FIELDS = {"example": {_TAG_1: '"features"'},
                "sequence_example": {_TAG_1: '"context"', _TAG_2: '"featureLists"'}}
_JSON_LISTS = {_TAG_1: '{"bytesList": ', _TAG_2: '{"floatList": ', _TAG_3: '{"int64List": '}
