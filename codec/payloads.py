"""What a file's records hold, when the bytes alone cannot say: a payload decodes them.

Without one (``payload=None``), records are read by the kind rule of
DESIGN.md: Example, SequenceExample, a TensorProto, protobuf of no known type,
or raw bytes. A payload the user chose (their own message type with
``--proto``, a TFDS dataset's feature spec) decodes every record of its file
its own way. Every record source has a ``payload`` attribute; callers decode
with ``decode_record(data, source.payload)``.

The flat view: statistics, schema inference, filters and CSV export read any
record as features, ``key -> (dtype, values)`` with dtype "int64", "float" or
"bytes". An Example's are its own; a tensor's, a message's and schema-less
protobuf's are built from their fields (:func:`record_fields`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from .record_types import DecodedRecord, RecordKind

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Payload", "fields_features", "flat_key", "int64_values", "kind_functions", "record_fields",
           "tensor_fields"]


class Payload(Protocol):
    """Decodes the records of one file.

    ``name`` is shown to the user ("lens.demo.Frame from frames.desc").
    ``decode`` never raises for bad data: a record that is not what the
    payload expects is a RAW ``DecodedRecord`` with a ``note`` saying why.
    """

    name: str

    def decode(self, data: bytes) -> DecodedRecord: ...


_DTYPE_NAMES: dict = {}  # numpy dtype -> its name as bytes (numpy computes .name in Python, per call)


def tensor_fields(array: np.ndarray) -> dict[str, tuple[str, list]]:
    """A tensor as flat features: ``dtype`` (its name), ``shape``, and ``values`` (flattened, C order)."""
    flat = array.reshape(-1)
    kind = array.dtype.kind
    name = _DTYPE_NAMES.get(array.dtype)
    if name is None:
        name = _DTYPE_NAMES[array.dtype] = b"string" if kind == "O" else array.dtype.name.encode()
    if kind == "O":
        dtype, values = "bytes", [bytes(v) for v in flat]
    elif kind in "biu":
        dtype, values = "int64", flat.tolist()
        if kind == "b":
            values = [int(v) for v in values]
    elif kind == "c":
        dtype = "float"
        values = [part for v in flat.tolist() for part in (v.real, v.imag)]
    else:
        dtype, values = "float", flat.tolist()
    return {"dtype": ("bytes", [name]), "shape": ("int64", list(array.shape)), "values": (dtype, values)}


def record_fields(decoded: DecodedRecord) -> dict[str, tuple[str, list]] | None:
    """The flat features of a record that is not an Example or SequenceExample; None for those and raw ones."""
    if decoded.fields is not None:
        return decoded.fields()
    functions = kind_functions(decoded.kind)
    return None if functions is None else functions["fields"](decoded)


_KINDS: dict = {}  # RecordKind -> its functions, imported on first use (numpy, json_format) and kept


def kind_functions(kind: RecordKind) -> dict | None:
    """What reads a tensor, message or schema-less protobuf record: ``{"json", "tree", "fields"}`` of a
    DecodedRecord (plus ``parse``, and for tensors ``canonical``, ``error`` and ``limit``); None for other kinds.

    Imported once, not per record: an import statement costs microseconds even when the module is loaded.
    """
    functions = _KINDS.get(kind)
    if functions is None and kind in (RecordKind.TENSOR, RecordKind.MESSAGE, RecordKind.PROTOBUF):
        if kind is RecordKind.TENSOR:
            from .errors import TensorDecodeError, TensorLimitError
            from .tensor_view import tensor_tree
            from .tensors import canonical_tensor, parse_tensor, tensor_json, tensor_of

            functions = {"json": lambda d: tensor_json(tensor_of(d)), "tree": lambda d: tensor_tree(tensor_of(d)),
                         "fields": lambda d: tensor_fields(tensor_of(d)), "parse": parse_tensor,
                         "canonical": canonical_tensor, "error": TensorDecodeError,
                         "limit": TensorLimitError}
        elif kind is RecordKind.MESSAGE:
            from .messages import message_fields, message_json, message_tree

            functions = {"json": lambda d: message_json(d.message), "tree": lambda d: message_tree(d.message),
                         "fields": lambda d: message_fields(d.message)}
        else:
            from .wire_format import protobuf_fields, wire_features, wire_json, wire_tree

            functions = {"json": lambda d: wire_json(d.value), "tree": lambda d: wire_tree(d.value),
                         "fields": lambda d: wire_features(d.value), "parse": protobuf_fields}
        _KINDS[kind] = functions
    return functions


def int64_values(values: list) -> list:
    """Integers as int64 holds them: uint64 past int64's range keeps its bits, as TensorFlow stores it."""
    if values and max(values) >= 1 << 63:
        return [v - (1 << 64) if v >= 1 << 63 else v for v in values]
    return values


_FEATURE_SCOPES = frozenset({"features", "context", "feature_lists"})  # first parts of an Example tree's paths


def flat_key(path: tuple) -> str:
    """The flat-view key of a tree node (see :func:`codec.decode.build_tree`): an Example's feature key,
    a message's dotted field names (``boxes.label``, indices left out), as statistics, filters and class
    names know them."""
    if len(path) > 1 and path[0] in _FEATURE_SCOPES:
        return str(path[1])
    return ".".join(p for p in path if isinstance(p, str))


def fields_features(fields: dict[str, tuple[str, list]]):
    """Flat features as a ``tf.train.Features`` map, the form every pass over Examples reads."""
    from .proto import Features

    features = Features()
    for key, (dtype, values) in fields.items():
        feature = features.feature[key]
        if dtype == "int64":
            feature.int64_list.value.extend(int64_values(values))
        elif dtype == "float":
            feature.float_list.value.extend(values)
        else:
            feature.bytes_list.value.extend(values)
    return features.feature
