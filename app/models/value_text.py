"""How a decoded record's values read as text: in the tree, its tooltips, a tensor's grid, an editor and JSON (no Qt).

The record tree (:mod:`app.models.record_tree_model`) shows these texts;
:func:`summarize` makes them on a worker for large records, so formatting a
huge value does not happen on the GUI thread. Class ids show their names
(``1 (cat)``) when a :class:`LabelSource` knows them. Text shows on one line with every
control or invisible character escaped (``\\t``, ``\\x1c``, ``\\u2028``: the codec's ``one_line_text``);
an editor gets the exact text.
"""
from __future__ import annotations

import base64
import datetime as dt
import math
from typing import Any, Protocol

from codec.decode.audio_summary import bytes_summary, pcm_summary
from codec.decode.decoder import DecodedRecord, TreeNode, format_value, is_text, one_line_text, value_at, value_count
from codec.decode.image_sniff import probe_image
from codec.decode.payloads import flat_key

VALUE_MAX_LEN = 160
SUMMARY_MAX_LEN = 72
_DTYPE_TEXT = {"int64": "int64", "float": "float", "bytes": "bytes", None: "empty"}
_FLOAT64 = {"float64", "double"}
_UNQUOTED_TEXT = {"enum", "timestamp", "duration"}  # str values shown as they are, not as quoted text


class LabelSource(Protocol):
    """What names class ids (``codec.datasets.label_maps.LabelNames``)."""

    def name(self, key: str, id_: int) -> str | None: ...


def json_value(value: Any, dtype: str | None) -> Any:
    """A value for JSON: numbers as numbers, text as text, other bytes as base64."""
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        b = bytes(value)
        return b.decode("utf-8") if is_text(b) else base64.b64encode(b).decode("ascii")
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, float):
        text = _float_text(value, dtype)  # the shortest form of the dtype, as shown
        return float(text) if math.isfinite(value) else text
    if isinstance(value, int):
        return value
    return str(value)


def node_json(node: TreeNode, decoded: DecodedRecord | None = None) -> Any:
    """A plain-JSON view of a node: a list for a feature, a dict for containers."""
    if node.role == "raw":
        data = decoded.data if decoded is not None else b""
        return json_value(data, "bytes")
    if node.role == "tensor":
        return {"dtype": node.dtype, "values": [json_value(v, node.dtype) for v in node.values]}
    if node.role in ("feature", "step", "value", "field") and not node.children:
        values = [json_value(v, node.dtype) for v in node.values]
        return values[0] if node.role == "value" or (node.role == "field" and len(values) == 1) else values
    if node.role in ("feature_list", "repeated"):
        return [node_json(child, decoded) for child in node.children]
    return {child.name: node_json(child, decoded) for child in node.children}


def value_name(holder: TreeNode, i: int) -> str | None:
    """``[1, 2]``: value ``i`` of a tensor of two or more dimensions by its place in the shape."""
    shape = getattr(holder.detail, "shape", ()) if holder.role == "tensor" else ()
    if len(shape) < 2:
        return None
    place = []
    for n in reversed(shape):
        i, rest = divmod(i, n)
        place.append(rest)
    return f"[{', '.join(str(p) for p in reversed(place))}]"


def _float_text(value: float, dtype: str | None) -> str:
    if dtype in _FLOAT64:
        return repr(float(value)) if math.isfinite(value) else format_value(value, "float")
    if dtype == "float16":
        import numpy as np

        if float(value).is_integer() and abs(value) < 1e16:
            return repr(float(value))  # 65504.0, not numpy's 6.55e+04
        return str(np.float16(value))
    return format_value(value, "float")


def _quoted(text: str, max_len: int) -> str:
    """A message's text quoted on one line, control characters escaped as a feature's text is (``\\x1c``)."""
    one_line = one_line_text(text[:max_len])
    if len(text) <= max_len and len(one_line) + 2 <= max_len:
        return f'"{one_line}"'
    return f'"{one_line[:max(1, max_len - 16)]}…" ({len(text):,} chars)'


def show_value(value: Any, dtype: str | None = None, max_len: int = VALUE_MAX_LEN) -> str:
    """One value of any record kind as a short string.

    Feature values as the codec's ``format_value`` makes them; besides those:
    bools as ``true``/``false``, float64 in full, text of messages quoted
    (enum names and dates bare), times as ISO dates.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value if dtype in _UNQUOTED_TEXT else _quoted(value, max_len)
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, float):
        return _float_text(value, dtype)
    if isinstance(value, int) and dtype == "timestamp":
        try:
            return dt.datetime.fromtimestamp(value, dt.timezone.utc).isoformat().replace("+00:00", "Z")
        except (OverflowError, OSError, ValueError):
            return str(value)
    if isinstance(value, (int, bytes, bytearray, memoryview)):
        return format_value(value, dtype if dtype in ("bytes", "float", "int64") else None, max_len)
    return str(value)


def labeled(value: Any, text: str, key: str, labels: LabelSource | None) -> str:
    """``1 (cat)`` when ``labels`` names id ``value`` of ``key``; ``text`` otherwise."""
    if labels is None or isinstance(value, bool) or not isinstance(value, int):
        return text
    name = labels.name(key, value)
    return f"{text} ({name})" if name else text


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def type_text(node: TreeNode, decoded: DecodedRecord | None = None) -> str:
    """The Type column: ``int64 · 2`` for a feature or step, the dtype of a list, ``raw · 8 bytes``."""
    role = node.role
    if role in ("feature", "step"):
        return f"{_DTYPE_TEXT[node.dtype]} · {value_count(node):,}" if node.dtype else "empty"
    if role == "feature_list":
        return _DTYPE_TEXT[node.dtype] if node.dtype else ("mixed" if node.children else "empty")
    if role == "raw":
        n = len(decoded.data) if decoded is not None else 0
        return f"raw · {n:,} byte{'s' if n != 1 else ''}"
    if role == "tensor":
        return f"{node.dtype} · {value_count(node):,}"
    if role == "field":
        n = value_count(node)
        return (node.dtype or "") if n == 1 else f"{node.dtype or 'empty'} · {n:,}"
    if role in ("message", "protobuf"):
        return node.dtype or role
    if role in ("repeated", "map"):
        return f"{node.dtype or role} · {len(node.children):,}"
    return ""


def _image_label(value: Any, dtype: str | None) -> str | None:
    """``<PNG 24x24> · 301 bytes`` when a bytes value is an encoded image (the table's style)."""
    if not isinstance(value, (bytes, bytearray)):
        return None
    info = probe_image(value)
    return f"<{info.format} {info.width}x{info.height}> · {len(value):,} bytes" if info else None


def _audio_label(value: Any) -> str | None:
    """``WAV · 16 kHz · mono · 0.25 s`` when a bytes value is encoded audio (its header only)."""
    return bytes_summary(value) if isinstance(value, bytes) else None


def _one_value(node: TreeNode, value: Any, max_len: int, labels: LabelSource | None) -> str:
    text = _image_label(value, node.dtype) or _audio_label(value) or show_value(value, node.dtype, max_len)
    return labeled(value, text, flat_key(node.path), labels)


def _values_summary(node: TreeNode, max_len: int, labels: LabelSource | None = None,
                    decoded: DecodedRecord | None = None) -> str:
    """One value as the codec formats it, or ``[a, b, …] (n)`` for several; raw PCM as its audio summary."""
    n = value_count(node)
    if n > 1 and decoded is not None and node.role == "feature" and node.dtype in ("int64", "float"):
        audio = pcm_summary(decoded, flat_key(node.path))
        if audio is not None:
            return audio
    if n == 0:
        return "[]"
    if n == 1:
        return _one_value(node, value_at(node, 0), max_len, labels)
    key = flat_key(node.path)
    parts: list[str] = []
    used = 2
    for i in range(n):
        value = value_at(node, i)
        text = labeled(value, show_value(value, node.dtype, 24), key, labels)
        if parts and used + len(text) + 2 > max_len - 8:
            return f"[{', '.join(parts)}, …] ({n:,})"
        parts.append(text)
        used += len(text) + 2
    return f"[{', '.join(parts)}]"


def value_text(node: TreeNode, decoded: DecodedRecord | None = None, max_len: int = SUMMARY_MAX_LEN,
               labels: LabelSource | None = None) -> str:
    """The Value column of a row; feature values as the codec's ``format_value`` makes them."""
    role = node.role
    if role == "value":
        return _one_value(node, node.values[0], max(max_len, VALUE_MAX_LEN), labels)
    if role in ("feature", "step", "tensor") or (role == "field" and not node.children):
        return _values_summary(node, max_len, labels, decoded)
    if role == "feature_list":
        return _plural(len(node.children), "step")
    if role in ("example", "features"):
        return _plural(len(node.children), "feature")
    if role == "feature_lists":
        return _plural(len(node.children), "list")
    if role == "sequence_example":
        context, lists = node.children
        return f"{_plural(len(context.children), 'context feature')} · {_plural(len(lists.children), 'list')}"
    if role == "raw":
        return format_value(decoded.data if decoded is not None else b"", "bytes", max_len)
    if role == "message" and node.values and node.children:  # an event's summary value: its first row's value
        return value_text(node.children[0], decoded, max_len, labels)
    if role in ("message", "protobuf", "field"):
        return _plural(len(node.children), "field")
    if role == "repeated":
        return _plural(len(node.children), "item")
    if role == "map":
        n = len(node.children)
        return f"{n:,} entr{'y' if n == 1 else 'ies'}"
    return ""


def edit_text(value: Any, dtype: str | None) -> str:
    """A value as the user edits it (what :func:`codec.editing.record_editor.parse_value` reads back)."""
    if dtype == "bytes":
        b = bytes(value)
        if (is_text(b) or not b) and not b.startswith((b"hex:", b"base64:")):
            return b.decode("utf-8")
        return "hex:" + b.hex()
    if dtype == "float":
        return format_value(value, "float")
    return str(int(value))


def summarize(tree: TreeNode, decoded: DecodedRecord, limit: int = 2000, labels: LabelSource | None = None) -> dict:
    """Value texts of the first ``limit`` nodes that have children, keyed as the model caches them.

    Formatting a huge value (is it text?) reads all of it; a worker thread
    calls this for large records so the GUI thread does not.
    """
    cache: dict = {}
    stack = [tree]
    while stack and len(cache) < limit:
        node = stack.pop()
        if node.role != "value":
            cache[id(node)] = value_text(node, decoded, labels=labels)
        stack.extend(reversed(node.children))
    return cache
