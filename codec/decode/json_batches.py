"""``cat --json`` and jsonl lines of many records at once, the same bytes as one by one.

Records of a dataset mostly share one layout: the same keys, list kinds and value
sizes, only the values differ. A layout seen twice becomes a template (a regular
expression whose groups are the values, and the line with a slot for each), so
a record of that layout is matched in C and only its values are spelt. Its floats
are spelt for the whole batch at once with numpy (:func:`float32_json`), exactly as
protobuf's ``ToShortestFloat`` and ``json.dumps`` spell them. Any other record takes
:func:`codec.decode.json_lines.json_line_text`.
"""
from __future__ import annotations

import re
import struct
from binascii import b2a_base64
from operator import itemgetter

from codec.decode.example_text import (
    _TAG_1,
    _TAG_2,
    _TAG_3,
    _Declined,
    _field,
    _fields,
    _float_json,
    _json_string,
    _packed_ints,
    _values,
    line_fields,
    line_format,
)
from codec.decode.json_lines import json_line_text

__all__ = ["JsonLinesWriter", "float32_json", "json_lines"]

_FLOAT_SLOT, _INT_SLOT, _BYTES_SLOT = 0, 1, 2
_LIST_NAMES = {_TAG_1: '{"bytesList": ', _TAG_2: '{"floatList": ', _TAG_3: '{"int64List": '}
_VECTOR_MIN = 64  # floats: fewer are spelt one by one
_TEMPLATES_MAX = 64  # layouts kept (a layout is a record length and its literal bytes)


class _Template:
    """One layout: its pattern and its line with a ``%s`` for each value (from its slots: (kind, group, count))."""

    __slots__ = ("pattern", "lines", "floats", "count", "values")

    def __init__(self, pattern: re.Pattern, text: str, slots: list) -> None:
        self.pattern = pattern
        #: the line's %-format, with an offset and without
        self.lines = tuple(line_format("example", with_offset) + text + "}" for with_offset in (True, False))
        at = [g for kind, g, _ in slots if kind == _FLOAT_SLOT]
        #: the float groups of a match, in the line's order, and how many floats they hold
        self.floats = (lambda groups: ()) if not at else itemgetter(*at) if len(at) > 1 else \
            (lambda groups: (groups[at[0]],))
        self.count = sum(count for kind, _, count in slots if kind == _FLOAT_SLOT)
        #: ``values(head, groups, spelt, at)``: the line's head values then the slots' texts, the floats
        #: from ``spelt[at]`` on
        self.values = _values_function(slots)


def _values_function(slots: list):
    """A function of (head, groups, spelt floats, first float): ``head`` and each slot's text; written
    for one layout (as ``collections.namedtuple`` writes its class): a record costs no loop over slots."""
    texts = []
    at = 0
    for kind, g, count in slots:
        if kind == _FLOAT_SLOT:
            texts.append(f"s[a + {at}]" if count == 1 else f'", ".join(s[a + {at}:a + {at + count}])')
            at += count
        elif kind == _INT_SLOT:
            texts.append(f"ints(g[{g}])")
        else:
            texts.append(' + ", " + '.join(f"b64(g[{k}])" for k in g))
    return eval(f"lambda h, g, s, a: h + ({', '.join(texts)},)", {"ints": _ints_json, "b64": _bytes_json})


def _bytes_json(raw: bytes) -> str:
    return f'"{b2a_base64(raw, newline=False).decode()}"'


def json_lines(records) -> str:
    """The lines (each ending in a newline) of ``records``, (index, data, status, offset, length)
    tuples, as :func:`codec.decode.json_lines.json_line_text` writes each (no payload, no label names)."""
    matched = []
    floats: list[bytes] = []
    for record in records:
        found = _match(record[1])
        matched.append(found)
        if found is not None:
            floats.extend(found[0].floats(found[1]))
    spelt = float32_json(b"".join(floats)) if floats else []
    at = 0
    out = []
    for (i, data, status, offset, length), found in zip(records, matched):
        if found is not None:
            template, groups = found
            try:
                values = template.values(line_fields(i, data, status, offset, length), groups, spelt, at)
            except _Declined:  # a packed run that is no run of varints
                pass
            else:
                out.append(template.lines[offset is None] % values)
                at += template.count
                continue
            at += template.count
        out.append(json_line_text(i, data, status, offset, length))
    out.append("")
    return "\n".join(out)


def _ints_json(raw: bytes) -> str:
    n = len(raw)
    if n > 2:
        if n <= 4:  # one varint of 3 or 4 bytes (an id, a size): its 7-bit groups put together
            v = int.from_bytes(raw, "little")
            if v & _HIGH_BITS[n] == _HIGH_BITS[n - 1]:
                return f'"{v & 0x7F | (v >> 1) & 0x3F80 | (v >> 2) & 0x1FC000 | (v >> 3) & 0xFE00000}"'
        return ", ".join([f'"{x}"' for x in _packed_ints(raw, 0, n)])
    text = _INTS.get(raw)
    if text is None:  # labels and small sizes: spelt once
        text = _INTS[raw] = ", ".join([f'"{x}"' for x in _packed_ints(raw, 0, n)])
    return text


_HIGH_BITS = [int.from_bytes(b"\x80" * k, "little") for k in range(5)]
_INTS: dict[bytes, str] = {}  # packed int64 lists of one or two bytes -> their JSON (at most 65,536)
_TEMPLATES: dict[int, list[_Template]] = {}  # record length -> templates
_SEEN: dict[int, int] = {}  # record length -> records of it without a template
_SEEN_MAX = 1 << 16
_LEARNT = [0, 0]  # templates learnt, records matched by one


def _match(data) -> tuple[_Template, tuple] | None:
    """(template, the values' bytes) of a record of a known layout; a layout seen twice is learnt."""
    if not isinstance(data, bytes):
        return None
    template: _Template | None
    n = len(data)
    for template in _TEMPLATES.get(n, ()):
        m = template.pattern.fullmatch(data)
        if m is not None:
            _LEARNT[1] += 1
            return template, m.groups()
    seen = _SEEN.get(n, 0) + 1
    if len(_SEEN) >= _SEEN_MAX:
        _SEEN.clear()
    _SEEN[n] = seen
    learnt, hits = _LEARNT
    if seen < 2 or len(_TEMPLATES.get(n, ())) >= 4 or (learnt >= 16 and hits < 8 * learnt):
        return None  # seen once, or layouts that do not repeat (sizes that vary): learning would cost
    _LEARNT[0] += 1
    try:
        template = _template(data)
    except (_Declined, OverflowError, UnicodeDecodeError):
        return None
    if template is None:
        return None
    if sum(len(t) for t in _TEMPLATES.values()) >= _TEMPLATES_MAX:
        _TEMPLATES.clear()
        _SEEN.clear()
    _TEMPLATES.setdefault(n, []).append(template)
    m = template.pattern.fullmatch(data)
    return (template, m.groups()) if m is not None else None


def _template(data: bytes) -> _Template | None:
    """The template of ``data``'s layout: an Example in the canonical layout with at least one value."""
    fields = _fields(data, 0, len(data))
    if [tag for tag, _, _ in fields] != [_TAG_1]:
        return None
    _, start, end = fields[0]
    spans: list[tuple[int, int]] = []  # each value's bytes in the record, in record order
    features = {}  # key -> (list tag, [(kind, first span, count or span list)])
    pos = start
    while pos < end:  # the checks of example_text._entries, keeping where each value is
        entry_start, pos = _field(data, pos, end, _TAG_1)
        key_start, key_end = _field(data, entry_start, pos, _TAG_1)
        value_start, value_end = _field(data, key_end, pos, _TAG_2)
        if value_end != pos:
            raise _Declined
        key = data[key_start:key_end].decode("utf-8")
        features[key] = _feature_slots(data, value_start, value_end, spans)
    if not features:
        return None
    pattern = []
    last = 0
    for a, b in spans:
        pattern.append(re.escape(data[last:a]) + b"(.{%d})" % (b - a))
        last = b
    pattern.append(re.escape(data[last:]))
    texts, slots = [], []
    for key in sorted(features):
        tag, feature_slots = features[key]
        text = "{}" if not tag else _LIST_NAMES[tag] + ("{}}" if not feature_slots else '{"value": [%s]}}')
        texts.append(f"{_json_string(key).replace('%', '%%')}: {text}")  # the slot: the one "%s" of ``text``
        slots.extend(feature_slots)
    if not slots:
        return None
    key_texts = ", ".join(texts)
    return _Template(re.compile(b"".join(pattern), re.DOTALL), '{"features": {"feature": {' + key_texts + "}}}",
                     slots)


def _feature_slots(data: bytes, start: int, end: int, spans: list) -> tuple[int, list]:
    """A Feature's list tag (0: none) and its slots, its values' spans appended to ``spans``."""
    tag, values = _values(data, start, end)  # every check of the one-record path
    if not tag or not values:
        return tag, []
    if tag == _TAG_1:
        first = len(spans)
        spans.extend(values)
        return tag, [(_BYTES_SLOT, list(range(first, len(spans))), len(values))]
    pos, _ = _field(data, start, end, tag)
    a, _ = _field(data, pos, end, _TAG_1)
    spans.append((a, end))
    if tag == _TAG_2:
        return tag, [(_FLOAT_SLOT, len(spans) - 1, (end - a) // 4)]
    return tag, [(_INT_SLOT, len(spans) - 1, 0)]


def float32_json(raw: bytes) -> list[str]:
    """Each little-endian float32 of ``raw`` as protobuf's JSON mapping writes a float field:
    ``repr`` of ``ToShortestFloat`` (the shortest of 6 or more significant digits that is the same
    float32), "NaN", "Infinity" and "-Infinity" quoted. Vectorised for values from 1e-9 to 1e6."""
    if len(raw) < 4 * _VECTOR_MIN:
        return [_float_json(x) for (x,) in _FLOAT.iter_unpack(raw)]
    import numpy as np

    with np.errstate(all="ignore"):  # NaNs with payloads
        return _spelt(np, np.frombuffer(raw, "<f4"))


def _spelt(np, x) -> list[str]:
    a32 = np.abs(x)
    a = a32.astype(np.float64)
    inside = (a >= 1e-9) & (a < 1e6)  # NaN is outside
    a = np.where(inside, a, 1.0)
    mantissa, exponent = np.frexp(a)
    m = (mantissa * (1 << 24)).astype(np.uint64)  # exact: a float32 has 24 significant bits
    two = exponent.astype(np.int64) - 24  # a == m * 2**two
    e10 = np.floor(np.log10(a)).astype(np.int64)
    for _ in range(2):  # log10 may be one off near a power of ten: put it right with exact integers
        below, above = _digits(m, two, 8 - e10, 9)[1:]
        e10 = e10 + above - below
    chosen = np.full(len(x), np.nan)
    for p in (9, 8, 7, 6):  # the last one that is the same float32 is the shortest
        value, below, above = _digits(m, two, p - 1 - e10, p)
        same = (value.astype(np.float32) == np.where(inside, a32, np.float32(1))) & ~below & ~above
        chosen = np.where(same, value, chosen)
    inside &= ~np.isnan(chosen)
    chosen = np.copysign(np.where(inside, chosen, 0.0), x.astype(np.float64))
    spelt = list(map(float.__repr__, chosen.tolist()))
    for k in np.flatnonzero(~inside).tolist():
        spelt[k] = _float_json(float(x[k]))
    return spelt


def _digits(m, two, s, p):
    """``m * 2**two * 10**s`` rounded half to even to an integer, as a float64 divided back by
    ``10**s`` (what ``float("%.{p}g" % x)`` gives), and whether that integer had fewer or more
    than ``p`` digits before rounding (a wrong decimal exponent, or ``s`` outside 0..17)."""
    import numpy as np

    pow5, pow10, pow10f = _powers()
    bad = (s < 0) | (s > 17)
    s = np.clip(s, 0, 17)
    n = m * pow5[s]  # < 2**64: m < 2**24 and 5**17 < 2**40
    shift = two + s
    left = np.clip(shift, 0, 40).astype(np.uint64)
    right = np.clip(-shift, 0, 62).astype(np.uint64)
    bad |= (shift > 40) | (-shift > 62)
    n = n << left
    q = n >> right
    twice = (n - (q << right)) << np.uint64(1)
    unit = np.uint64(1) << right
    whole = q  # the integer part, before rounding
    q = q + ((twice > unit) | ((twice == unit) & ((q & np.uint64(1)) == 1))).astype(np.uint64)
    below = bad | (whole < pow10[p - 1])
    above = bad | (whole >= pow10[p])
    return q.astype(np.float64) / pow10f[s], below, above


_FLOAT = struct.Struct("<f")


_TABLES: list = []  # numpy's powers of 5 and 10 (uint64) and of 10 (float64), made on first use


def _powers():
    import numpy as np

    if not _TABLES:
        _TABLES.extend((np.array([5**k for k in range(18)], dtype=np.uint64),
                        np.array([10**k for k in range(19)], dtype=np.uint64),
                        np.array([float(10**k) for k in range(18)])))
    return _TABLES


class JsonLinesWriter:
    """Writes records' lines to ``stream`` (a text stream) in batches of ``BATCH`` records or
    ``BATCH_BYTES`` of data, whichever comes first (the file is read little ahead of what is written);
    ``flush`` writes what is held. With a payload or label names each line is written at once."""

    BATCH = 4096
    BATCH_BYTES = 256 << 10

    def __init__(self, stream, payload=None, labels=None) -> None:
        self.stream, self.payload, self.labels = stream, payload, labels
        self._held: list = []
        self._bytes = 0

    def write(self, index: int, data: bytes, status, offset: int | None = None, length: int | None = None,
              path: str | None = None) -> None:
        """Hold (or write) one record's line; ``path``: the file it is in, for a payload that says more."""
        if self.payload is not None or self.labels:
            self.stream.write(json_line_text(index, data, status, offset, length, self.payload, path, self.labels)
                              + "\n")
            return
        self._held.append((index, data, status, offset, length))
        self._bytes += len(data)
        if len(self._held) >= self.BATCH or self._bytes >= self.BATCH_BYTES:
            self.flush()

    def flush(self) -> None:
        """Write the lines held."""
        held, self._held, self._bytes = self._held, [], 0
        if held:
            self.stream.write(json_lines(held))
