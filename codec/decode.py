"""Record bytes -> Example, SequenceExample or raw bytes, and views of them.

``decode_record`` decides the kind of a record by the rule in DESIGN.md and
never raises for bad data: anything that is not a well-formed Example or
SequenceExample is a raw record. ``build_tree`` turns a decoded record into a
plain-Python tree the GUI adapts; ``format_value`` and ``feature_cell`` make
short human strings of values.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Union

from google.protobuf.message import DecodeError

from codec.proto import Example, SequenceExample

__all__ = [
    "DecodedRecord",
    "RecordKind",
    "TreeNode",
    "build_tree",
    "decode_record",
    "detect_kind",
    "feature_cell",
    "feature_keys",
    "feature_values",
    "format_value",
    "is_text",
    "record_feature_lists",
    "record_features",
    "record_json_value",
    "value_at",
    "value_count",
    "value_node",
]

Value = Union[int, float, bytes]

_WIRE_LENGTH_DELIMITED = 2
_MAX_VARINT_BYTES = 10
# ASCII whitespace that str.isprintable() rejects but text may contain.
_WHITESPACE_TABLE = str.maketrans("", "", "\t\n\r\x0b\x0c")
_ONE_LINE_ESCAPES = str.maketrans({"\n": "\\n", "\r": "\\r", "\t": "\\t"})


class RecordKind(str, Enum):
    """What a record's bytes hold."""

    EXAMPLE = "example"
    SEQUENCE_EXAMPLE = "sequence_example"
    RAW = "raw"


@dataclass
class DecodedRecord:
    """A record's bytes with their kind and parsed message (None when raw)."""

    kind: RecordKind
    data: bytes
    message: Any = None


# ---------------------------------------------------------------- detection


def read_varint(data: bytes, pos: int) -> tuple[int, int] | None:
    """The varint at ``pos`` and the position after it; None if it runs past the end or over 10 bytes."""
    result = 0
    for i in range(min(_MAX_VARINT_BYTES, len(data) - pos)):
        byte = data[pos + i]
        result |= (byte & 0x7F) << (7 * i)
        if not byte & 0x80:
            return result, pos + i + 1
    return None


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


def decode_record(data: bytes) -> DecodedRecord:
    """Decode one record's bytes; malformed protobuf falls back to RAW, never raises."""
    data = bytes(data)
    kind = _candidate_kind(data)
    if kind is RecordKind.RAW:
        return DecodedRecord(RecordKind.RAW, data)
    try:
        message = _MESSAGE_CLASSES[kind].FromString(data)
    except (DecodeError, RuntimeError, ValueError):
        return DecodedRecord(RecordKind.RAW, data)
    return DecodedRecord(kind, data, message)


def detect_kind(data: bytes) -> RecordKind:
    """The kind of a record: Example, SequenceExample, or RAW for anything else."""
    return decode_record(data).kind


def record_json_value(decoded: DecodedRecord) -> dict:
    """TensorFlow's protobuf JSON of the message, or ``{"base64": ...}`` for raw bytes."""
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
    """A Feature's dtype ("int64" | "float" | "bytes", None when unset) and values."""
    kind = feature.WhichOneof("kind")
    if kind == "int64_list":
        return "int64", list(feature.int64_list.value)
    if kind == "float_list":
        return "float", list(feature.float_list.value)
    if kind == "bytes_list":
        return "bytes", list(feature.bytes_list.value)
    return None, []


def record_features(decoded: DecodedRecord) -> Any | None:
    """The Features map of an Example, or the context of a SequenceExample."""
    if decoded.kind is RecordKind.EXAMPLE:
        return decoded.message.features.feature
    if decoded.kind is RecordKind.SEQUENCE_EXAMPLE:
        return decoded.message.context.feature
    return None


def record_feature_lists(decoded: DecodedRecord) -> Any | None:
    """The FeatureLists map of a SequenceExample, None for other kinds."""
    if decoded.kind is RecordKind.SEQUENCE_EXAMPLE:
        return decoded.message.feature_lists.feature_list
    return None


def feature_keys(decoded: DecodedRecord) -> list[str]:
    """Sorted keys of an Example's features or a SequenceExample's context."""
    features = record_features(decoded)
    return sorted(features) if features is not None else []


# ---------------------------------------------------------------- tree


@dataclass
class TreeNode:
    """One node of a record's tree; ``path`` addresses it inside the record.

    Roles: "example", "sequence_example", "raw" (roots), "features" (the
    context of a SequenceExample), "feature_lists", "feature", "feature_list",
    "step" and "value". Values of a feature or step stay in ``values``; the
    GUI makes value rows on demand with ``value_node``.
    """

    name: str
    role: str
    dtype: str | None = None
    values: list = field(default_factory=list)
    children: list[TreeNode] = field(default_factory=list)
    path: tuple = ()


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
    """The record as a tree: root role is its kind; features sorted by key."""
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


def is_text(b: bytes) -> bool:
    """True for non-empty valid UTF-8 made only of printable characters and whitespace."""
    if not b:
        return False
    try:
        text = bytes(b).decode("utf-8")
    except UnicodeDecodeError:
        return False
    if text.isprintable() or text.translate(_WHITESPACE_TABLE).isprintable():
        return True
    return all(c.isprintable() or c.isspace() for c in text)


def _format_float(value: float) -> str:
    """The shortest decimal that reads back as the same float32, as TensorFlow shows it."""
    import numpy as np  # imported on first use: decoding a record does not need it

    with np.errstate(over="ignore"):
        single = np.float32(value)
    if np.isinf(single) and not math.isinf(value):
        return repr(float(value))  # not a float32 at all: show it as it is
    return str(single)


def _format_text(b: bytes, max_len: int) -> str:
    text = b.decode("utf-8").translate(_ONE_LINE_ESCAPES)
    if len(text) + 2 <= max_len:
        return f'"{text}"'
    suffix = f" ({len(b)} bytes)"
    keep = max(1, max_len - len(suffix) - 3)
    return f'"{text[:keep]}…"{suffix}'


def _format_binary(b: bytes, max_len: int) -> str:
    suffix = f" ({len(b)} bytes)"
    if not b:
        return '""' + suffix
    shown = max(1, (max_len - len("hex: ") - len(suffix) - 2) // 3)
    hex_part = b[:shown].hex(" ")
    ellipsis = " …" if shown < len(b) else ""
    return f"hex: {hex_part}{ellipsis}{suffix}"


def format_value(value: Value, dtype: str | None = None, max_len: int = 80) -> str:
    """One value as a short readable string.

    ints as ints; floats as their shortest float32 form (``0.1``, ``nan``,
    ``-inf``); text bytes quoted (long text cut with … and the byte count);
    other bytes as a hex preview with the byte count.
    """
    if dtype == "bytes" or isinstance(value, (bytes, bytearray, memoryview)):
        b = bytes(value)
        return _format_text(b, max_len) if is_text(b) else _format_binary(b, max_len)
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
    from codec.image_sniff import probe_image  # imported on first use: Pillow is slow to import

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
        dtype, values = feature_values(features[key])
        return _cell_for_values(dtype, values, max_len)
    lists = record_feature_lists(decoded)
    if lists is not None and key in lists:
        steps = len(lists[key].feature)
        return f"{steps} step" if steps == 1 else f"{steps} steps"
    return ""
