"""Record bytes -> Example, SequenceExample, tensor, message, schema-less protobuf or raw bytes, and views of them.

``decode_record`` decides the kind of a record by the rule in DESIGN.md,
extended (see docs/payloads.md) to tensors and protobuf of no known type,
or by the payload the user chose, and never raises for bad data. ``build_tree``
turns a decoded record into a plain-Python tree the GUI adapts;
``format_value`` and ``feature_cell`` make short human strings of values. The
shared types live in :mod:`codec.decode.decoded`; this module is their public API.
"""

from __future__ import annotations

import base64
import math
import unicodedata
from typing import Any, cast

from google.protobuf.message import DecodeError

from codec.decode.decoded import DecodedRecord, RecordKind, TreeNode, is_text, read_varint, scalar_of
from codec.decode.example_proto import Example, SequenceExample

__all__ = [
    "DecodedRecord",
    "RecordKind",
    "TreeNode",
    "build_tree",
    "decode_record",
    "detect_kind",
    "feature_cell",
    "feature_keys",
    "feature_dtype",
    "feature_length",
    "number_array",
    "number_beside",
    "number_beside_or_why",
    "feature_values",
    "format_value",
    "is_text",
    "one_line_text",
    "read_varint",
    "record_feature_lists",
    "record_features",
    "record_json_value",
    "shown_values",
    "value_at",
    "value_count",
    "value_node",
]

Value = int | float | bytes

_WIRE_LENGTH_DELIMITED = 2
_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


# ---------------------------------------------------------------- detection


def _top_level_fields(data: bytes) -> set[int] | None:
    """Field numbers of the top-level fields if all are length-delimited, else None.

    Every length is checked against the bytes that remain, so hostile lengths
    cannot make this read or allocate beyond the record.
    """
    numbers: set[int] = set()
    pos = 0
    while pos < len(data):
        read = read_varint(data, pos)
        if read is None:
            return None
        tag, pos = read
        number, wire_type = tag >> 3, tag & 7
        if wire_type != _WIRE_LENGTH_DELIMITED or number == 0:
            return None
        read = read_varint(data, pos)
        if read is None:
            return None
        length, pos = read
        if length > len(data) - pos:
            return None
        pos += length
        numbers.add(number)
    return numbers


def _candidate_kind(data: bytes) -> RecordKind:
    """The kind the wire layout suggests, before parsing the message."""
    numbers = _top_level_fields(data)
    if numbers is None:
        return RecordKind.RAW
    if numbers <= {1}:  # an empty record is an empty Example
        return RecordKind.EXAMPLE
    if numbers <= {1, 2}:  # so field 2 is present
        return RecordKind.SEQUENCE_EXAMPLE
    return RecordKind.RAW


_MESSAGE_CLASSES = {RecordKind.EXAMPLE: Example, RecordKind.SEQUENCE_EXAMPLE: SequenceExample}
_OTHER_KINDS = frozenset({RecordKind.TENSOR, RecordKind.MESSAGE, RecordKind.PROTOBUF, RecordKind.EVENT})  # read by codec.decode.payloads
_TENSOR_DTYPE_TAG = 0x08  # TensorProto field 1 (dtype), varint
_TENSOR_SHAPE_TAG = 0x12  # TensorProto field 2 (tensor_shape), length-delimited


def decode_record(data: bytes, payload=None) -> DecodedRecord:
    """Decode one record's bytes; never raises for bad data.

    With a ``payload`` (see :mod:`codec.decode.payloads`), it decides. Without one:
    an Example or SequenceExample by the kind rule, else a TensorProto, else
    protobuf of no known type (read schema-less), else raw bytes.
    """
    data = bytes(data)
    if payload is not None:
        return payload.decode(data)
    if data[:1] == b"\x08":  # a varint field 1: never an Example or SequenceExample, maybe a tensor
        return _other_kind(data)
    kind = _candidate_kind(data)
    if kind is not RecordKind.RAW:
        try:
            message = _MESSAGE_CLASSES[kind].FromString(data)
        except (DecodeError, RuntimeError, ValueError):
            pass
        else:
            if len(data) <= EMPTY_MESSAGE_SIZE or not _holds_nothing(kind, message):
                return DecodedRecord(kind, data, message)
            other = _other_kind(data)
            name = "an Example" if kind is RecordKind.EXAMPLE else "a SequenceExample"
            other.note = f"not {name}: all {len(data):,} of its bytes are in fields {name} does not define"
            return other
    return _other_kind(data)


EMPTY_MESSAGE_SIZE = 4  # the longest empty Example or SequenceExample: 0a 00 12 00


def _holds_nothing(kind: RecordKind, message) -> bool:
    """Did the parse keep nothing of the record (no feature, context or feature list): then all of its
    bytes were fields the message does not have, which protobuf and TensorFlow skip unseen."""
    if kind is RecordKind.EXAMPLE:
        return not message.features.feature
    return not message.context.feature and not message.feature_lists.feature_list


def _other_kind(data: bytes) -> DecodedRecord:
    """A record that is not an Example or SequenceExample: a tensor, schema-less protobuf, or raw."""
    if data[:1] == b"\x08":
        tensor = _payloads().tensor_kind()
        parsed = tensor.canonical(data)  # the common layout, read without protobuf
        if parsed is None and _tensor_layout(data):
            try:
                parsed = tensor.parse(data)
            except tensor.limit as exc:  # a tensor, too large to expand here: shown raw, saying why
                return DecodedRecord(RecordKind.RAW, data, note=f"not decoded: {exc}")
            except tensor.error:
                pass
        if parsed is not None:
            return DecodedRecord(RecordKind.TENSOR, data, parsed)  # the array: codec.decode.tensors.tensor_of
    fields = _payloads().protobuf_kind().parse(data)
    if fields is not None:
        return DecodedRecord(RecordKind.PROTOBUF, data, value=fields)
    return DecodedRecord(RecordKind.RAW, data)


_payloads_module = None  # codec.decode.payloads, once imported


def _payloads():
    """:mod:`codec.decode.payloads`, imported on first use (numpy is not needed for Examples)."""
    global _payloads_module
    if _payloads_module is None:
        from codec.decode import payloads

        _payloads_module = payloads
    return _payloads_module


def _kind_reader(kind: RecordKind):
    """The reader of a tensor, message or schema-less protobuf record (:func:`codec.decode.payloads.kind_reader`)."""
    return _payloads().kind_reader(kind)


def _tensor_layout(data: bytes) -> bool:
    """Does ``data`` start as ``tf.io.serialize_tensor`` writes: a dtype, then the shape?

    TensorFlow always sets the shape (an empty message for a scalar) and
    serializes fields in number order, so its bytes begin ``08 <dtype> 12``.
    """
    if len(data) < 3 or data[0] != _TENSOR_DTYPE_TAG:
        return False
    read = read_varint(data, 1)
    return read is not None and read[1] < len(data) and data[read[1]] == _TENSOR_SHAPE_TAG


def detect_kind(data: bytes, payload=None) -> RecordKind:
    """The kind of a record (see :func:`decode_record`)."""
    return decode_record(data, payload).kind


def record_json_value(decoded: DecodedRecord) -> dict:
    """The ``value`` of a ``cat --json`` line.

    Examples: TensorFlow's protobuf JSON. Tensors: ``{"dtype", "shape",
    "values", "sha256"}``. Messages: protobuf's JSON mapping. Schema-less
    protobuf: its fields. Raw bytes: ``{"base64": ...}``.
    """
    if decoded.kind in _OTHER_KINDS:
        return _kind_reader(decoded.kind).json(decoded)
    if decoded.message is None:
        return {"base64": base64.b64encode(decoded.data).decode("ascii")}
    from google.protobuf.json_format import MessageToDict  # imported on first use: it is slow to import

    return _sorted_maps(MessageToDict(decoded.message))


def _sorted_maps(obj: dict) -> dict:
    """``obj`` with its feature maps in key order, as the text format prints them.

    Protobuf gives map entries in hash order, which changes from one process to
    the next: the same record would print differently on every run.
    """
    for key, value in obj.items():
        if isinstance(value, dict):
            if key in ("feature", "featureList"):
                value = dict(sorted(value.items()))
                obj[key] = value
            _sorted_maps(value)
    return obj


# ---------------------------------------------------------------- features


def feature_values(feature: Any) -> tuple[str | None, list[Value]]:
    """A Feature's dtype ("int64" | "float" | "bytes", None when unset) and values; a flat view's
    ``(dtype, values)`` (:class:`codec.decode.payloads.FlatValues`) as it is."""
    if isinstance(feature, tuple):
        return feature[0], list(feature[1])
    kind = feature.WhichOneof("kind")
    if kind == "int64_list":
        return "int64", list(feature.int64_list.value)
    if kind == "float_list":
        return "float", list(feature.float_list.value)
    if kind == "bytes_list":
        return "bytes", list(feature.bytes_list.value)
    return None, []


_KIND_DTYPES = {"int64_list": "int64", "float_list": "float", "bytes_list": "bytes"}


def feature_dtype(feature: Any) -> str | None:
    """:func:`feature_values`' dtype alone, without reading a value (a large number list costs nothing)."""
    if isinstance(feature, tuple):
        return feature[0]
    return _KIND_DTYPES.get(feature.WhichOneof("kind"))


def feature_length(feature: Any) -> int:
    """How many values a Feature (or a flat view's ``(dtype, values)``) holds, without reading them."""
    if isinstance(feature, tuple):
        return len(feature[1])
    kind = feature.WhichOneof("kind")
    return 0 if kind is None else len(getattr(feature, kind).value)


def number_array(feature: Any) -> Any:
    """A number Feature's values as a numpy array (float32 for a FloatList, int64 for an Int64List) made from
    its packed wire form: no Python object per value (a 80,000-sample PCM list in well under a millisecond)."""
    import numpy as np

    dtype = feature_dtype(feature)
    if isinstance(feature, tuple) or dtype not in ("float", "int64"):
        return np.asarray(feature_values(feature)[1], dtype=np.float32 if dtype == "float" else np.int64)
    numbers = feature.float_list if dtype == "float" else feature.int64_list
    wire = numbers.SerializeToString()  # field 1, packed: a tag byte, the payload's length, the payload
    if not wire:
        return np.zeros(0, np.float32 if dtype == "float" else np.int64)
    head = read_varint(wire, 1)
    if wire[0] != 0x0A or head is None or sum(head) != len(wire):  # not one packed run (never so from upb): the slow way
        return np.asarray(list(numbers.value), dtype=np.float32 if dtype == "float" else np.int64)
    if dtype == "float":
        return np.frombuffer(wire, "<f4", offset=head[1]).astype(np.float32)
    from codec.format.riegeli import varint_array

    decoded = varint_array(wire[head[1]:], len(numbers.value))
    if decoded is None:
        return np.asarray(list(numbers.value), dtype=np.int64)
    return decoded[0].view(np.int64)


def shown_values(feature: Any) -> tuple[str | None, list[Value] | list[str]]:
    """:func:`feature_values` with the dtype :func:`format_value` shows them by: a payload's doubles
    as "double" (in full), its enums as "enum" (their names as text, bare, as the tree shows them)."""
    dtype, values = feature_values(feature)
    scalar = scalar_of(feature)
    if scalar == "enum":
        return "enum", [cast(bytes, v).decode("utf-8", "backslashreplace") for v in values]  # (names: bytes)
    return ("double" if scalar == "double" else dtype), values


def record_features(decoded: DecodedRecord) -> Any | None:
    """The Features map of an Example, the context of a SequenceExample, or another payload's flat view.

    Tensors, messages and schema-less protobuf are read as features by
    :func:`codec.decode.payloads.record_fields` (``key -> (dtype, values)``, values
    exact, which :func:`feature_values` reads as it reads a Feature); raw
    records have none (None).
    """
    if decoded.fields is None:
        if decoded.kind is RecordKind.EXAMPLE:
            return decoded.message.features.feature
        if decoded.kind is RecordKind.SEQUENCE_EXAMPLE:
            return decoded.message.context.feature
        if decoded.kind is RecordKind.RAW:
            return None
    if decoded._features is None:
        from codec.decode.payloads import record_fields

        decoded._features = record_fields(decoded)
    return decoded._features


def record_feature_lists(decoded: DecodedRecord) -> Any | None:
    """The FeatureLists map of a SequenceExample, None for other kinds."""
    if decoded.kind is RecordKind.SEQUENCE_EXAMPLE:
        return decoded.message.feature_lists.feature_list
    return None


def feature_keys(decoded: DecodedRecord) -> list[str]:
    """Sorted keys of an Example's features or a SequenceExample's context."""
    features = record_features(decoded)
    return sorted(features) if features is not None else []


def number_beside(features: Any, key: str, names: tuple[str, ...], family: str, *,
                  whole: bool = False) -> int | float | None:
    """The first positive number (a whole one when ``whole``) held alone under ``names`` beside ``key``: its
    siblings, its own sub-keys (``key/name``, ``key_name``), then the top level and ``family/name``. How a
    sample rate is found beside audio and a frame rate beside video (docs/media.md)."""
    return number_beside_or_why(features, key, names, family, whole=whole)[0]


def number_beside_or_why(features: Any, key: str, names: tuple[str, ...], family: str, *, whole: bool = False,
                         limit: float = math.inf) -> tuple[int | float | None, str | None]:
    """(number_beside's number up to ``limit``, None); (None, why) when such a feature is there but none
    holds one, and (None, None) when there is none."""
    parent = key.rpartition("/")[0]
    places = [f"{parent}/{n}" if parent else n for n in names]
    places += [f"{key}/{n}" for n in names] + [f"{key}_{n}" for n in names]
    places += list(names) + [f"{family}/{n}" for n in names]
    refused = None
    for place in dict.fromkeys(places):
        if place in features:
            values = feature_values(features[place])[1]
            value = values[0] if len(values) == 1 else None
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
                    and 0 < value <= limit and (not whole or float(value).is_integer()):
                return value, None
            if refused is None:
                said = repr(values[0]) if len(values) == 1 else f"{len(values)} values"
                wanted = "one whole number" if whole else "one number"
                bound = f" from 1 to {limit:,.0f}" if math.isfinite(limit) else " above 0"
                refused = f"{place} is {said}, not {wanted}{bound}"
    return None, refused


# ---------------------------------------------------------------- tree


def _feature_node(name: str, role: str, feature: Any, path: tuple) -> TreeNode:
    dtype, values = feature_values(feature)
    return TreeNode(name=name, role=role, dtype=dtype, values=values, path=path)


def _features_nodes(features: Any, prefix: str) -> list[TreeNode]:
    """Feature nodes of a Features map, sorted by key, with paths (prefix, key)."""
    return [_feature_node(key, "feature", features[key], (prefix, key))
            for key in sorted(features)]


def _feature_list_node(key: str, feature_list: Any) -> TreeNode:
    path = ("feature_lists", key)
    steps = [
        _feature_node(f"step {i}", "step", feature, path + (i,))
        for i, feature in enumerate(feature_list.feature)
    ]
    dtypes = {step.dtype for step in steps}
    dtype = dtypes.pop() if len(dtypes) == 1 else None
    return TreeNode(name=key, role="feature_list", dtype=dtype, children=steps, path=path)


def build_tree(decoded: DecodedRecord) -> TreeNode:
    """The record as a tree: root role is its kind; features sorted by key (a payload's own, when it gives one)."""
    if decoded.tree is not None:
        return decoded.tree()
    if decoded.kind is RecordKind.EXAMPLE:
        children = _features_nodes(decoded.message.features.feature, "features")
        return TreeNode(name="Example", role="example", children=children)
    if decoded.kind is RecordKind.SEQUENCE_EXAMPLE:
        message = decoded.message
        context = TreeNode(
            name="context", role="features", path=("context",),
            children=_features_nodes(message.context.feature, "context"),
        )
        lists = message.feature_lists.feature_list
        feature_lists = TreeNode(
            name="feature_lists", role="feature_lists", path=("feature_lists",),
            children=[_feature_list_node(key, lists[key]) for key in sorted(lists)],
        )
        return TreeNode(name="SequenceExample", role="sequence_example",
                        children=[context, feature_lists])
    if decoded.kind in _OTHER_KINDS:
        return _kind_reader(decoded.kind).tree(decoded)
    return TreeNode(name="raw", role="raw")


def value_count(node: TreeNode) -> int:
    """How many values a feature or step node holds (0 for other nodes)."""
    return len(node.values)


def value_at(node: TreeNode, index: int) -> Value:
    """Value ``index`` of a feature or step node."""
    return node.values[index]


def value_node(node: TreeNode, index: int) -> TreeNode:
    """A "value" node for value ``index`` of ``node``, made on demand."""
    return TreeNode(
        name=f"[{index}]", role="value", dtype=node.dtype,
        values=[node.values[index]], path=node.path + (index,),
    )


# ---------------------------------------------------------------- formatting


def _format_float(value: float) -> str:
    """The shortest decimal that reads back as the same float32, as TensorFlow shows it."""
    import numpy as np  # imported on first use: decoding a record does not need it

    with np.errstate(over="ignore"):
        single = np.float32(value)
    if np.isinf(single) and not math.isinf(value):
        return repr(float(value))  # not a float32 at all: show it as it is
    return str(single)


def _escaped(c: str) -> str:
    """One character ``one_line_text`` does not show as it is: ``\\t``, ``\\x1c``, ``\\u2028`` or ``\\U000e0001``."""
    if c in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[c]
    if c.isprintable() or unicodedata.category(c) == "Zs":
        return c
    n = ord(c)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def one_line_text(text: str) -> str:
    """``text`` on one line with nothing hidden: tab, newline and carriage return as ``\\t \\n \\r``, other
    control and invisible characters (C0, DEL, C1, U+2028, zero-width and direction marks) as Python's
    ``repr`` writes them (``\\x1c``, ``\\u2028``); letters, marks, symbols and spaces as they are."""
    if text.isprintable():
        return text
    return "".join(map(_escaped, text))


def _format_text(b: bytes, max_len: int) -> str:
    text = b.decode("utf-8")
    shown = one_line_text(text[:max_len])  # (an escape is never shorter than its character)
    if len(text) <= max_len and len(shown) + 2 <= max_len:
        return f'"{shown}"'
    suffix = f" ({len(b)} bytes)"
    keep = max(1, max_len - len(suffix) - 3)
    if not text[:max_len].isprintable():  # cut between characters' escapes, never inside one
        out, used = [], 0
        for char in text[:keep]:
            piece = _escaped(char)
            if used + len(piece) > keep:
                break
            out.append(piece)
            used += len(piece)
        return f'"{"".join(out)}…"{suffix}'
    return f'"{shown[:keep]}…"{suffix}'


def _format_binary(b: bytes, max_len: int) -> str:
    suffix = f" ({len(b)} bytes)"
    if not b:
        return '""' + suffix
    shown = max(1, (max_len - len("hex: ") - len(suffix) - 2) // 3)
    hex_part = b[:shown].hex(" ")
    ellipsis = " …" if shown < len(b) else ""
    return f"hex: {hex_part}{ellipsis}{suffix}"


def format_value(value: Value | str, dtype: str | None = None, max_len: int = 80) -> str:
    """One value as a short readable string.

    ints as ints, exact whatever their size; floats as their shortest float32 form (``0.1``, ``nan``,
    ``-inf``), or in full for a double (dtype "double"/"float64"); text bytes quoted (long
    text cut with … and the byte count); other bytes as a hex preview with
    the byte count; a message's strings, enum names and dates as they are,
    bools as true/false.
    """
    if dtype == "bytes" or isinstance(value, (bytes, bytearray, memoryview)):
        b = bytes(cast(bytes, value))  # (of dtype "bytes": bytes-like)
        return _format_text(b, max_len) if is_text(b) else _format_binary(b, max_len)
    if isinstance(value, str):
        return value if len(value) <= max_len else value[: max_len - 1] + "…"
    if isinstance(value, bool):
        return "true" if value else "false"
    if dtype in ("double", "float64") and isinstance(value, float):
        return repr(value)
    if dtype == "float" or isinstance(value, float):
        return _format_float(value)
    return str(int(value))


def _format_list(values: list, dtype: str | None, max_len: int) -> str:
    """``[1, 2, 3]``, or ``[1, 2, 3, …] (40)`` when the list does not fit."""
    parts: list[str] = []
    used = 2
    for value in values:
        text = format_value(value, dtype, max_len=24)
        if used + len(text) + 2 > max_len - 8 and parts:
            return f"[{', '.join(parts)}, …] ({len(values)})"
        parts.append(text)
        used += len(text) + 2
    return f"[{', '.join(parts)}]"


def _image_label(b: bytes) -> str | None:
    """``<JPEG 48x32>`` when the bytes are an encoded image, else None."""
    from codec.decode.image_sniff import probe_image  # imported on first use: Pillow is slow to import

    info = probe_image(b)
    return f"<{info.format} {info.width}x{info.height}>" if info else None


def _cell_for_values(dtype: str | None, values: list, max_len: int) -> str:
    if len(values) == 1:
        if dtype == "bytes":
            label = _image_label(values[0])
            if label:
                return label
        return format_value(values[0], dtype, max_len)
    return _format_list(values, dtype, max_len)


def feature_cell(decoded: DecodedRecord, key: str, max_len: int = 40) -> str:
    """A one-line summary of feature ``key`` for a table cell; "" when absent.

    Looks in an Example's features or a SequenceExample's context, then in its
    feature lists (summarised as ``12 steps``).
    """
    features = record_features(decoded)
    if features is not None and key in features:
        return _cell_for_values(*shown_values(features[key]), max_len)
    lists = record_feature_lists(decoded)
    if lists is not None and key in lists:
        steps = len(lists[key].feature)
        return f"{steps} step" if steps == 1 else f"{steps} steps"
    return ""
