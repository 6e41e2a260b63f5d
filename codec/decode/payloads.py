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
protobuf's are built from their fields (:func:`record_fields`), as
:class:`FlatValues` whose values are exact (docs/exact-values.md): integers
of every width as Python ints (uint64 up to 2**64 - 1), bools as bools,
doubles as float64, enums by name with their numbers beside.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from codec.decode.decoded import DecodedRecord, FlatValues, RecordKind

if TYPE_CHECKING:
    import numpy as np

__all__ = ["FlatValues", "Payload", "array_values", "flat_key", "kind_functions", "record_fields",
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


def array_values(flat: np.ndarray) -> FlatValues:
    """A one-dimensional array's values, exact: bools as bools, float64 as doubles, complex as (real, imag)."""
    kind = flat.dtype.kind
    if kind == "O":
        return FlatValues("bytes", [bytes(v) for v in flat])
    if kind in "biu":
        return FlatValues("int64", flat.tolist(), "bool" if kind == "b" else None)
    wide = flat.dtype.itemsize >= (16 if kind == "c" else 8)
    values = flat.tolist()
    if kind == "c":
        values = [part for v in values for part in (v.real, v.imag)]
    return FlatValues("float", values, "double" if wide else None)


def tensor_fields(array: np.ndarray) -> dict[str, tuple[str, list]]:
    """A tensor as flat features: ``dtype`` (its name), ``shape``, and ``values`` (flattened, C order)."""
    name = _DTYPE_NAMES.get(array.dtype)
    if name is None:
        name = _DTYPE_NAMES[array.dtype] = b"string" if array.dtype.kind == "O" else array.dtype.name.encode()
    return {"dtype": ("bytes", [name]), "shape": ("int64", list(array.shape)), "values": array_values(array.reshape(-1))}


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
            from codec.errors import TensorDecodeError, TensorLimitError
            from codec.decode.tensor_view import tensor_tree
            from codec.decode.tensors import canonical_tensor, parse_tensor, tensor_json, tensor_of

            functions = {"json": lambda d: tensor_json(tensor_of(d)), "tree": lambda d: tensor_tree(tensor_of(d)),
                         "fields": lambda d: tensor_fields(tensor_of(d)), "parse": parse_tensor,
                         "canonical": canonical_tensor, "error": TensorDecodeError,
                         "limit": TensorLimitError}
        elif kind is RecordKind.MESSAGE:
            from codec.decode.messages import message_fields, message_json, message_tree

            functions = {"json": lambda d: message_json(d.message), "tree": lambda d: message_tree(d.message),
                         "fields": lambda d: message_fields(d.message)}
        else:
            from codec.decode.schemaless import protobuf_fields, wire_features, wire_json, wire_tree

            functions = {"json": lambda d: wire_json(d.value), "tree": lambda d: wire_tree(d.value),
                         "fields": lambda d: wire_features(d.value), "parse": protobuf_fields}
        _KINDS[kind] = functions
    return functions


_FEATURE_SCOPES = frozenset({"features", "context", "feature_lists"})  # first parts of an Example tree's paths


def flat_key(path: tuple) -> str:
    """The flat-view key of a tree node (see :func:`codec.decode.decoder.build_tree`): an Example's feature key,
    a message's dotted field names (``boxes.label``, indices left out), as statistics, filters and class
    names know them."""
    if len(path) > 1 and path[0] in _FEATURE_SCOPES:
        return str(path[1])
    return ".".join(p for p in path if isinstance(p, str))
