"""The types every record decoder shares: a record's kind, the decoded record, its flat values, its tree, and two
byte-level helpers. Nothing here imports another codec module, so each kind's decoder
(:mod:`codec.decode.tensors`, :mod:`codec.decode.messages`, :mod:`codec.decode.schemaless`, ...) can use them while
:mod:`codec.decode.decoder`, which dispatches to those decoders and is the public API of these names, imports them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable

__all__ = ["DecodedRecord", "FlatValues", "RecordKind", "TreeNode", "is_text", "read_varint", "scalar_of"]

_MAX_VARINT_BYTES = 10
# ASCII whitespace that str.isprintable() rejects but text may contain.
_WHITESPACE_TABLE = str.maketrans("", "", "\t\n\r\x0b\x0c")


class RecordKind(str, Enum):
    """What a record's bytes hold."""

    EXAMPLE = "example"
    SEQUENCE_EXAMPLE = "sequence_example"
    TENSOR = "tensor"  # a TensorProto (tf.io.serialize_tensor)
    MESSAGE = "message"  # the user's own protobuf message, by the descriptor they gave
    PROTOBUF = "protobuf"  # protobuf wire format of no known type, read schema-less
    EVENT = "event"  # a TensorBoard event file's Event message (codec.decode.events)
    RAW = "raw"


class FlatValues(tuple):
    """One feature of the flat view: unpacks as ``(dtype, values)``; ``scalar`` says what the values were read as.

    ``scalar`` is "bool" (int64 family, values are Python bools), "double"
    (float family, float64 values, not float32), "enum" (bytes family, the
    names; ``numbers`` holds the numbers), else the dtype itself. A plain
    ``(dtype, values)`` tuple is a FlatValues of that dtype.
    """

    scalar: str
    numbers: list | None

    def __new__(cls, dtype: str, values: list, scalar: str | None = None, numbers: list | None = None) -> FlatValues:
        self = super().__new__(cls, (dtype, values))
        self.scalar = scalar or dtype
        self.numbers = numbers
        return self

    def __getnewargs__(self) -> tuple:
        return self[0], self[1], self.scalar, self.numbers


def scalar_of(feature) -> str | None:
    """What a flat feature's values were read as (:attr:`FlatValues.scalar`); None for a protobuf Feature."""
    return getattr(feature, "scalar", None)


@dataclass(slots=True)
class DecodedRecord:
    """A record's bytes with their kind and parsed message (None when raw).

    ``message``: the Example, SequenceExample or user message; for a tensor,
    the checked TensorProto (a ``codec.decode.tensors.ParsedTensor``) whose array
    ``codec.decode.tensors.tensor_of`` makes on first use and keeps in ``value``.
    ``value`` holds what a payload decoded beyond the message: a tensor's numpy
    array, the schema-less fields of unknown protobuf, a TFDS record's features.
    ``note`` says why a record is not what its file's payload expects (RAW then).
    """

    kind: RecordKind
    data: bytes
    message: Any = None
    value: Any = None
    note: str | None = None
    # A payload's own flat view of the record (see codec.decode.payloads), when the kind alone does not give it.
    fields: Callable[[], dict] | None = None
    # A payload's own boxes: (ymin, xmin, ymax, xmax, class name or None), normalised (a TFDS BBoxFeature).
    boxes: Callable[[], list] | None = None
    # A payload's own audio values (codec.decode.audio.AudioRef), where its spec says they are (TFDS Audio).
    audio: Callable[[], list] | None = None
    # A payload's own images (codec.decode.images.ImageRef), all of them: find_images looks nowhere else (an Event).
    images: Callable[[], list] | None = None
    # A payload's own tree of the record (codec.decode.decoder.build_tree returns it): an Event's, named by tag.
    tree: Callable[[], TreeNode] | None = None
    _features: Any = field(default=None, repr=False, compare=False)


def read_varint(data: bytes, pos: int) -> tuple[int, int] | None:
    """The varint at ``pos`` and the position after it; None if it runs past the end or over 10 bytes."""
    result = 0
    for i in range(min(_MAX_VARINT_BYTES, len(data) - pos)):
        byte = data[pos + i]
        result |= (byte & 0x7F) << (7 * i)
        if not byte & 0x80:
            return result, pos + i + 1
    return None


@dataclass
class TreeNode:
    """One node of a record's tree; ``path`` addresses it inside the record.

    Roles: "example", "sequence_example", "tensor", "message", "protobuf",
    "raw" (roots), "features" (the context of a SequenceExample),
    "feature_lists", "feature", "feature_list", "step" and "value"; inside
    messages and schema-less protobuf: "field" (values of one field),
    "message" (a nested message; "[i]" children of a "repeated" node) and "map"
    (children named by key). Values of a feature, step or field stay in
    ``values``; the GUI makes value rows on demand with ``value_node``.
    ``detail`` carries what a view can draw: a tensor's numpy array.
    """

    name: str
    role: str
    dtype: str | None = None
    values: list = field(default_factory=list)
    children: list[TreeNode] = field(default_factory=list)
    path: tuple = ()
    detail: Any = None


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
