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

from typing import TYPE_CHECKING, Mapping, Protocol

from codec.decode.decoded import DecodedRecord, FlatValues, RecordKind, TreeNode

if TYPE_CHECKING:
    import numpy as np

__all__ = ["FlatValues", "KindReader", "Payload", "array_values", "flat_key", "kind_reader", "record_fields",
           "tensor_fields"]


class Payload(Protocol):
    """Decodes the records of one file.

    ``name`` is shown to the user ("lens.demo.Frame from frames.desc").
    ``decode`` never raises for bad data: a record that is not what the
    payload expects is a RAW ``DecodedRecord`` with a ``note`` saying why.
    ``runs``: a TensorBoard log folder's file -> its run ({} otherwise);
    ``run_of(path)``: the run of a record of ``path`` (None: none).
    ``line_extras(decoded, path)``: what a ``cat --json`` line adds ({}: nothing).
    A caller asks these, never ``getattr`` (:class:`codec.decode.payload_defaults.PayloadDefaults` says "none").
    """

    name: str

    @property
    def runs(self) -> Mapping[str, str]: ...

    def decode(self, data: bytes) -> DecodedRecord: ...

    def run_of(self, path: str | None) -> str | None: ...

    def line_extras(self, decoded: DecodedRecord, path: str | None) -> dict: ...


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
    reader = kind_reader(decoded.kind)
    return None if reader is None else reader.fields(decoded)


class KindReader:
    """How records of one kind that is not an Example or SequenceExample read: as ``cat --json``'s
    value, as a tree for the detail view, and as flat features.

    Each kind imports what it needs (numpy, json_format) when its reader is first made
    (:func:`kind_reader`), not per record: an import statement costs microseconds even when loaded.
    """

    def json(self, decoded: DecodedRecord) -> dict:
        raise NotImplementedError

    def tree(self, decoded: DecodedRecord) -> TreeNode:
        raise NotImplementedError

    def fields(self, decoded: DecodedRecord) -> dict[str, tuple[str, list]]:
        raise NotImplementedError


class TensorKind(KindReader):
    """A TensorProto (``tf.io.serialize_tensor``); ``parse``/``canonical`` read one from bytes, raising
    ``error`` when it is not one and ``limit`` when it is too large to expand."""

    def __init__(self) -> None:
        from codec.decode import tensor_view, tensors
        from codec.errors import TensorDecodeError, TensorLimitError

        self._tensors, self._view = tensors, tensor_view
        self.parse = tensors.parse_tensor
        self.canonical = tensors.canonical_tensor
        self.error, self.limit = TensorDecodeError, TensorLimitError

    def json(self, decoded: DecodedRecord) -> dict:
        return self._tensors.tensor_json(self._tensors.tensor_of(decoded))

    def tree(self, decoded: DecodedRecord) -> TreeNode:
        return self._view.tensor_tree(self._tensors.tensor_of(decoded))

    def fields(self, decoded: DecodedRecord) -> dict[str, tuple[str, list]]:
        return tensor_fields(self._tensors.tensor_of(decoded))


class MessageKind(KindReader):
    """A record of the user's own message type (``--proto``), parsed by protobuf."""

    def __init__(self) -> None:
        from codec.decode import messages

        self._messages = messages

    def json(self, decoded: DecodedRecord) -> dict:
        return self._messages.message_json(decoded.message)

    def tree(self, decoded: DecodedRecord) -> TreeNode:
        return self._messages.message_tree(decoded.message)

    def fields(self, decoded: DecodedRecord) -> dict[str, tuple[str, list]]:
        return self._messages.message_fields(decoded.message)


class EventKind(MessageKind):
    """A TensorBoard event file's Event (:mod:`codec.decode.events`): read as any message is."""


class ProtobufKind(KindReader):
    """Protobuf of no known type, read schema-less; ``parse`` reads its fields from bytes (None: not protobuf)."""

    def __init__(self) -> None:
        from codec.decode import schemaless

        self._wire = schemaless
        self.parse = schemaless.protobuf_fields

    def json(self, decoded: DecodedRecord) -> dict:
        return self._wire.wire_json(decoded.value)

    def tree(self, decoded: DecodedRecord) -> TreeNode:
        return self._wire.wire_tree(decoded.value)

    def fields(self, decoded: DecodedRecord) -> dict[str, tuple[str, list]]:
        return self._wire.wire_features(decoded.value)


_READERS: dict[RecordKind, KindReader] = {}  # made on first use and kept
_READER_CLASSES: dict[RecordKind, type[KindReader]] = {
    RecordKind.TENSOR: TensorKind, RecordKind.MESSAGE: MessageKind, RecordKind.PROTOBUF: ProtobufKind,
    RecordKind.EVENT: EventKind}


def kind_reader(kind: RecordKind) -> KindReader | None:
    """The reader of a tensor, message, event or schema-less protobuf record; None for other kinds."""
    reader = _READERS.get(kind)
    if reader is None and kind in _READER_CLASSES:
        reader = _READERS[kind] = _READER_CLASSES[kind]()
    return reader


def tensor_kind() -> TensorKind:
    """The tensor reader (what the kind rule tries first on a record starting with a varint field 1)."""
    reader = kind_reader(RecordKind.TENSOR)
    assert isinstance(reader, TensorKind)
    return reader


def protobuf_kind() -> ProtobufKind:
    """The schema-less protobuf reader (what the kind rule tries after a tensor)."""
    reader = kind_reader(RecordKind.PROTOBUF)
    assert isinstance(reader, ProtobufKind)
    return reader


_FEATURE_SCOPES = frozenset({"features", "context", "feature_lists"})  # first parts of an Example tree's paths


def flat_key(path: tuple) -> str:
    """The flat-view key of a tree node (see :func:`codec.decode.decoder.build_tree`): an Example's feature key,
    a message's dotted field names (``boxes.label``, indices left out), as statistics, filters and class
    names know them."""
    if len(path) > 1 and path[0] in _FEATURE_SCOPES:
        return str(path[1])
    return ".".join(p for p in path if isinstance(p, str))
